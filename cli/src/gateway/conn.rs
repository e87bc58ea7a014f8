//! The gateway's connections: admission (a cap in all and per client address, answered
//! 503), hyper's header-read timeout (answered 408), an idle timeout (the connection is
//! closed), TLS by rustls with HTTP/1.1 or HTTP/2 by ALPN, and graceful shutdown (stop
//! accepting, let what is in flight finish, close the rest after the drain time). The
//! service, the limits and the TLS certificate can be replaced while connections are
//! open (SIGHUP): each request uses the service current when it arrives.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::future::Future;
use std::io;
use std::net::{IpAddr, Shutdown};
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex, RwLock};
use std::task::{ready, Context, Poll, Waker};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Request, Response};
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;

use super::config::Limits;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Counters for `/metrics`.
#[derive(Debug, Default)]
pub struct Stats {
    accepted: AtomicU64,
    open: AtomicU64,
    refused_max: AtomicU64,
    refused_per_client: AtomicU64,
    header_timeouts: AtomicU64,
    idle: AtomicU64,
    drained: AtomicU64,
    tls_failures: AtomicU64,
}

impl Stats {
    /// The Prometheus text of the counters.
    pub fn render(&self, out: &mut String) {
        let get = |n: &AtomicU64| n.load(Relaxed);
        let _ = write!(
            out,
            "# HELP rpcscan_connections_accepted_total Client connections admitted.\n\
             # TYPE rpcscan_connections_accepted_total counter\n\
             rpcscan_connections_accepted_total {}\n\
             # HELP rpcscan_connections_open Client connections open now.\n\
             # TYPE rpcscan_connections_open gauge\n\
             rpcscan_connections_open {}\n\
             # HELP rpcscan_connections_refused_total Connections answered 503 and closed, by cap.\n\
             # TYPE rpcscan_connections_refused_total counter\n\
             rpcscan_connections_refused_total{{reason=\"max_connections\"}} {}\n\
             rpcscan_connections_refused_total{{reason=\"max_connections_per_client\"}} {}\n\
             # HELP rpcscan_connections_closed_total Connections the gateway closed, by reason.\n\
             # TYPE rpcscan_connections_closed_total counter\n\
             rpcscan_connections_closed_total{{reason=\"header_timeout\"}} {}\n\
             rpcscan_connections_closed_total{{reason=\"idle_timeout\"}} {}\n\
             rpcscan_connections_closed_total{{reason=\"drain\"}} {}\n\
             rpcscan_connections_closed_total{{reason=\"tls_handshake\"}} {}\n",
            get(&self.accepted),
            get(&self.open),
            get(&self.refused_max),
            get(&self.refused_per_client),
            get(&self.header_timeouts),
            get(&self.idle),
            get(&self.drained),
            get(&self.tls_failures),
        );
    }
}

/// Reads a PEM certificate chain and key into a TLS acceptor offering `h2` and
/// `http/1.1` by ALPN.
pub fn tls_acceptor(cert: &std::path::Path, key: &std::path::Path) -> Result<TlsAcceptor, String> {
    let certs = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("--tls-cert {}: {e}", cert.display()))?;
    if certs.is_empty() {
        return Err(format!("--tls-cert {}: no certificate", cert.display()));
    }
    let key = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| format!("--tls-key {}: {e}", key.display()))?;
    // ring keeps the build light (aws-lc-rs is not otherwise in the tree); rustls
    // 0.23.48 deprecates ring's provider for lacking post-quantum key exchange (X25519
    // and the NIST curves remain).
    #[allow(deprecated)]
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| format!("--tls-cert/--tls-key: {e}"))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// What the connections share: the current service, limits and TLS acceptor, the
/// counters, the connections open per client address.
pub struct Server<S> {
    service: RwLock<S>,
    limits: RwLock<Limits>,
    tls: RwLock<Option<TlsAcceptor>>,
    stats: Arc<Stats>,
    clients: Mutex<HashMap<IpAddr, usize>>,
    /// Refused connections being closed gently (bounded).
    lingering: AtomicUsize,
    /// Set before `stop` turns true: read by the connections on their wakes instead of
    /// polling their receivers of `stop`.
    stopping: AtomicBool,
}

/// Refused connections read and dropped at most this long, this many at once, so the
/// client sees the 503 rather than a reset; past that they are closed at once.
const LINGER: Duration = Duration::from_millis(500);
const MAX_LINGERING: usize = 256;

/// The heartbeat's period without a header timeout (it only checks for the stop then),
/// and its shortest.
const HEARTBEAT_IDLE: Duration = Duration::from_secs(5);
const HEARTBEAT_MIN: Duration = Duration::from_millis(10);

impl<S, B> Server<S>
where
    S: tower_service::Service<Request<Incoming>, Response = Response<B>> + Clone + Send + Sync,
    S: Unpin,
    S: 'static,
    S::Future: Send + Unpin + 'static,
    S::Error: Into<BoxError>,
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    /// A server of `service` (TLS when `tls` is set).
    pub fn new(service: S, limits: Limits, tls: Option<TlsAcceptor>, stats: Arc<Stats>) -> Self {
        Server {
            service: RwLock::new(service),
            limits: RwLock::new(limits),
            tls: RwLock::new(tls),
            stats,
            clients: Mutex::new(HashMap::new()),
            lingering: AtomicUsize::new(0),
            stopping: AtomicBool::new(false),
        }
    }

    /// Replaces the service (for the next requests of every connection), the limits (for
    /// the next connections) and the TLS acceptor (for the next handshakes; `None` keeps
    /// the current one).
    pub fn replace(&self, service: S, limits: Limits, tls: Option<TlsAcceptor>) {
        *self.service.write().unwrap_or_else(|e| e.into_inner()) = service;
        *self.limits.write().unwrap_or_else(|e| e.into_inner()) = limits;
        if let Some(tls) = tls {
            *self.tls.write().unwrap_or_else(|e| e.into_inner()) = Some(tls);
        }
    }

    fn limits(&self) -> Limits {
        *self.limits.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Accepts connections until `stop` turns true or accepting fails; each connection
    /// holds a clone of `stop` until it ends (so its sender's `closed()` tells when all
    /// have).
    pub async fn serve(
        self: Arc<Self>,
        listener: TcpListener,
        mut stop: watch::Receiver<bool>,
    ) -> io::Result<()> {
        tokio::spawn(Arc::clone(&self).heartbeat());
        loop {
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                _ = stop.wait_for(|stop| *stop) => return Ok(()),
            };
            let (stream, peer) = match accepted {
                Ok(accepted) => accepted,
                // The peer gave up between SYN and accept, or descriptors ran out for a
                // moment: neither ends the gateway.
                Err(e) if is_transient(&e) => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
                Err(e) => return Err(e),
            };
            // Answers are written whole; Nagle's delay would only hold back their last
            // segment.
            let _ = stream.set_nodelay(true);
            let Some(admitted) = self.admit(peer.ip()) else {
                self.refuse(stream);
                continue;
            };
            tokio::spawn(Arc::clone(&self).connection(stream, admitted, stop.clone()));
        }
    }

    /// Keeps a timer in tokio's timer wheel due sooner than any header timeout a request
    /// arms, until the server stops. tokio wakes its I/O driver (an `eventfd` write, and
    /// one more event for the next `epoll_wait`) whenever a timer is registered that is
    /// due before every timer the wheel held when the driver last parked: with every
    /// connection's request in flight (no header timer armed), the next request's header
    /// timer was such a timer, ~0.4 times a request under load. Due at half the header
    /// timeout (5 s by default), this timer makes that never happen.
    async fn heartbeat(self: Arc<Self>) {
        while !self.stopping.load(Relaxed) {
            let header = self.limits().header_timeout;
            let period =
                if header.is_zero() { HEARTBEAT_IDLE } else { (header / 2).max(HEARTBEAT_MIN) };
            tokio::time::sleep(period).await;
        }
    }

    /// Counts the connection in, or `None` when a cap is reached (counted).
    fn admit(self: &Arc<Self>, ip: IpAddr) -> Option<Admitted<S>> {
        let limits = self.limits();
        let mut clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        let open = self.stats.open.load(Relaxed);
        if limits.max_connections != 0 && open >= limits.max_connections as u64 {
            self.stats.refused_max.fetch_add(1, Relaxed);
            return None;
        }
        let from_ip = clients.entry(ip).or_insert(0);
        if limits.max_connections_per_client != 0 && *from_ip >= limits.max_connections_per_client {
            self.stats.refused_per_client.fetch_add(1, Relaxed);
            return None;
        }
        *from_ip += 1;
        self.stats.open.fetch_add(1, Relaxed);
        self.stats.accepted.fetch_add(1, Relaxed);
        Some(Admitted { server: Arc::clone(self), ip, limits })
    }

    /// Answers 503 (cleartext only: over TLS the connection is just closed), then reads
    /// what the client sent for a moment so that closing does not reset the answer away.
    fn refuse(self: &Arc<Self>, stream: TcpStream) {
        let tls = self.tls.read().map_or(true, |tls| tls.is_some());
        if tls {
            return;
        }
        let _ = stream.try_write(
            b"HTTP/1.1 503 Service Unavailable\r\nretry-after: 1\r\nconnection: close\r\n\
              content-length: 0\r\n\r\n",
        );
        let _ = socket2::SockRef::from(&stream).shutdown(Shutdown::Write);
        if self.lingering.fetch_add(1, Relaxed) >= MAX_LINGERING {
            self.lingering.fetch_sub(1, Relaxed);
            return;
        }
        let server = Arc::clone(self);
        tokio::spawn(async move {
            let mut sink = [0; 4096];
            let _ = tokio::time::timeout(LINGER, async {
                loop {
                    if stream.readable().await.is_err() {
                        break;
                    }
                    match stream.try_read(&mut sink) {
                        Ok(0) => break,
                        Ok(_) => {}
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                        Err(_) => break,
                    }
                }
            })
            .await;
            server.lingering.fetch_sub(1, Relaxed);
        });
    }

    async fn connection(
        self: Arc<Self>,
        stream: TcpStream,
        admitted: Admitted<S>,
        stop: watch::Receiver<bool>,
    ) {
        let limits = admitted.limits;
        let stream = Arc::new(stream);
        let activity = Arc::new(Activity::new());
        let io = Io { stream: Arc::clone(&stream), activity: Arc::clone(&activity) };
        let service = Tracked { server: Arc::clone(&self), activity: Arc::clone(&activity) };
        let tls = self.tls.read().map_or(None, |tls| tls.clone());
        let mut http1 = hyper::server::conn::http1::Builder::new();
        http1
            .timer(TokioTimer::new())
            .header_read_timeout(Some(limits.header_timeout).filter(|t| !t.is_zero()));
        let Some(acceptor) = tls else {
            let conn = http1.serve_connection(TokioIo::new(io), service);
            let result = self.drive(conn, &activity, limits.idle_timeout, stop).await;
            if result.is_err_and(|e| e.is_timeout()) {
                self.stats.header_timeouts.fetch_add(1, Relaxed);
                let _ = stream.try_write(&request_timeout());
                let _ = socket2::SockRef::from(&*stream).shutdown(Shutdown::Write);
            }
            return;
        };
        let handshake = acceptor.accept(io);
        let tls = if limits.header_timeout.is_zero() {
            handshake.await
        } else {
            tokio::time::timeout(limits.header_timeout, handshake)
                .await
                .unwrap_or_else(|_| Err(io::ErrorKind::TimedOut.into()))
        };
        let Ok(tls) = tls else {
            self.stats.tls_failures.fetch_add(1, Relaxed);
            return;
        };
        if tls.get_ref().1.alpn_protocol() == Some(b"h2") {
            let mut http2 = hyper::server::conn::http2::Builder::new(TokioExecutor::new());
            http2.timer(TokioTimer::new());
            let conn = http2.serve_connection(TokioIo::new(tls), service);
            let _ = self.drive(conn, &activity, limits.idle_timeout, stop).await;
        } else {
            let conn = http1.serve_connection(TokioIo::new(tls), service);
            if self
                .drive(conn, &activity, limits.idle_timeout, stop)
                .await
                .is_err_and(|e| e.is_timeout())
            {
                self.stats.header_timeouts.fetch_add(1, Relaxed);
            }
        }
    }

    /// Runs a connection to its end: gracefully shut down when `stop` turns true or when
    /// it has been idle for the idle timeout.
    async fn drive<C>(
        &self,
        conn: C,
        activity: &Activity,
        idle_timeout: Duration,
        mut stop: watch::Receiver<bool>,
    ) -> hyper::Result<()>
    where
        C: Graceful,
    {
        let mut conn = pin!(conn);
        let mut closing = false;
        loop {
            if !closing && *stop.borrow_and_update() {
                conn.as_mut().graceful();
                closing = true;
            }
            let idle_check = !closing && !idle_timeout.is_zero();
            let idle_at = activity.last() + idle_timeout;
            let mut changed = pin!(stop.changed());
            let mut idle = pin!(tokio::time::sleep_until(idle_at.into()));
            // The waker `changed` and `idle` were last polled with: while the task's waker
            // is that one, a wake by the connection (nearly every wake) needs only their
            // states read, not their polls (a lock for `changed`).
            let mut armed: Option<Waker> = None;
            let event = std::future::poll_fn(|cx| {
                if let Poll::Ready(result) = conn.as_mut().poll(cx) {
                    return Poll::Ready(Some(result));
                }
                let stopped = !closing && self.stopping.load(Relaxed);
                let idled = idle_check && idle.is_elapsed();
                let same = armed.as_ref().is_some_and(|waker| waker.will_wake(cx.waker()));
                if same && !stopped && !idled {
                    return Poll::Pending;
                }
                if !closing && changed.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(None);
                }
                if idle_check && idle.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(None);
                }
                armed = Some(cx.waker().clone());
                Poll::Pending
            })
            .await;
            if let Some(result) = event {
                return result;
            }
            if idle_check
                && idle.is_elapsed()
                && activity.in_flight.load(Relaxed) == 0
                && activity.last().elapsed() >= idle_timeout
            {
                self.stats.idle.fetch_add(1, Relaxed);
                conn.as_mut().graceful();
                closing = true;
            }
        }
    }

    /// Stops: `stop` turns true (the accept loop returns, connections shut down
    /// gracefully), then waits until every connection has ended or `drain` has passed,
    /// counting those still open then as closed by the drain.
    pub async fn drain(&self, stop: watch::Sender<bool>, drain: Duration) {
        self.stopping.store(true, Relaxed);
        let _ = stop.send(true);
        if tokio::time::timeout(drain, stop.closed()).await.is_err() {
            self.stats.drained.fetch_add(stop.receiver_count() as u64, Relaxed);
        }
    }
}

/// The 408 a connection gets when its header block did not arrive in time (cleartext).
fn request_timeout() -> Vec<u8> {
    let body = rpcscan::response::ErrorResponse::new(
        rpcscan::response::INVALID_REQUEST,
        "Invalid Request: header not received in time",
    )
    .to_vec();
    let mut answer = format!(
        "HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\nconnection: close\r\n\
         content-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    answer.extend_from_slice(&body);
    answer
}

/// An admitted connection, counted in `open` and per address until dropped.
struct Admitted<S> {
    server: Arc<Server<S>>,
    ip: IpAddr,
    limits: Limits,
}

impl<S> Drop for Admitted<S> {
    fn drop(&mut self) {
        self.server.stats.open.fetch_sub(1, Relaxed);
        let mut clients = self.server.clients.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = clients.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                clients.remove(&self.ip);
            }
        }
    }
}

/// A hyper connection (HTTP/1.1 or HTTP/2) that can be told to finish gracefully.
trait Graceful: Future<Output = hyper::Result<()>> {
    fn graceful(self: Pin<&mut Self>);
}

impl<I, S, B> Graceful for hyper::server::conn::http1::Connection<I, S>
where
    S: hyper::service::HttpService<Incoming, ResBody = B>,
    S::Error: Into<BoxError>,
    I: hyper::rt::Read + hyper::rt::Write + Unpin + 'static,
    B: Body + 'static,
    B::Error: Into<BoxError>,
{
    fn graceful(self: Pin<&mut Self>) {
        self.graceful_shutdown();
    }
}

impl<I, S, B, E> Graceful for hyper::server::conn::http2::Connection<I, S, E>
where
    S: hyper::service::HttpService<Incoming, ResBody = B>,
    S::Error: Into<BoxError>,
    I: hyper::rt::Read + hyper::rt::Write + Unpin,
    B: Body + 'static,
    B::Error: Into<BoxError>,
    E: hyper::rt::bounds::Http2ServerConnExec<S::Future, B>,
{
    fn graceful(self: Pin<&mut Self>) {
        self.graceful_shutdown();
    }
}

/// When a connection last received bytes or finished a request, and how many of its
/// requests are in flight (an answer streaming counts until its body ends).
struct Activity {
    start: Instant,
    /// Milliseconds since `start`.
    last: AtomicU64,
    in_flight: AtomicUsize,
}

impl Activity {
    fn new() -> Self {
        Activity { start: Instant::now(), last: AtomicU64::new(0), in_flight: AtomicUsize::new(0) }
    }

    fn touch(&self) {
        let now = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last.store(now, Relaxed);
    }

    fn last(&self) -> Instant {
        self.start + Duration::from_millis(self.last.load(Relaxed))
    }
}

/// The TCP stream, shared with the connection's task (which writes the 408 after hyper
/// gave the connection up), noting activity on every read.
struct Io {
    stream: Arc<TcpStream>,
    activity: Arc<Activity>,
}

impl AsyncRead for Io {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            ready!(self.stream.poll_read_ready(cx))?;
            let space = buf.remaining();
            let mut read = None;
            // Into the unfilled part as it is: `initialize_unfilled` would zero all of
            // hyper's spare read buffer on every read (a fifth of the gateway's
            // instructions per request). A read that leaves space in the buffer has
            // drained the socket (epoll is edge-triggered): its readiness is cleared, as
            // tokio's own `TcpStream` does, so hyper's next read waits for the next edge
            // instead of a `recvfrom` returning `EAGAIN` (one syscall a request). The
            // outer `try_io` clears only the readiness seen before the read: bytes that
            // arrive after it set it again.
            let result = self.stream.try_io(Interest::READABLE, || {
                let n = self.stream.try_read_buf(buf)?;
                read = Some(n);
                if 0 < n && n < space {
                    return Err(io::ErrorKind::WouldBlock.into());
                }
                Ok(n)
            });
            match (read, result) {
                (Some(n), _) => {
                    if n > 0 {
                        self.activity.touch();
                    }
                    return Poll::Ready(Ok(()));
                }
                (None, Err(e)) if e.kind() != io::ErrorKind::WouldBlock => {
                    return Poll::Ready(Err(e))
                }
                (None, _) => {}
            }
        }
    }
}

impl AsyncWrite for Io {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            ready!(self.stream.poll_write_ready(cx))?;
            match self.stream.try_write(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                result => return Poll::Ready(result),
            }
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        loop {
            ready!(self.stream.poll_write_ready(cx))?;
            match self.stream.try_write_vectored(bufs) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                result => return Poll::Ready(result),
            }
        }
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        match socket2::SockRef::from(&*self.stream).shutdown(Shutdown::Write) {
            Err(e) if e.kind() != io::ErrorKind::NotConnected => Poll::Ready(Err(e)),
            _ => Poll::Ready(Ok(())),
        }
    }
}

/// The per-connection service: the server's current service, with the request counted
/// in flight until its answer's body ends.
struct Tracked<S> {
    server: Arc<Server<S>>,
    activity: Arc<Activity>,
}

impl<S, B> hyper::service::Service<Request<Incoming>> for Tracked<S>
where
    S: tower_service::Service<Request<Incoming>, Response = Response<B>> + Clone + Send + Sync,
    S: Unpin,
    S: 'static,
    S::Future: Send + Unpin + 'static,
    S::Error: Into<BoxError>,
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response<InFlightBody<B>>;
    type Error = BoxError;
    type Future = TrackedFuture<S>;

    fn call(&self, request: Request<Incoming>) -> Self::Future {
        let service = self.server.service.read().unwrap_or_else(|e| e.into_inner()).clone();
        let guard = InFlight::new(Arc::clone(&self.activity));
        TrackedFuture { state: Call::Ready(service, request), guard: Some(guard) }
    }
}

/// The answer of a [`Tracked`] request: the service's, once it is ready and has answered
/// (a future of its own rather than a boxed `async` block: one allocation less a request).
pub struct TrackedFuture<S: tower_service::Service<Request<Incoming>>> {
    state: Call<S>,
    guard: Option<InFlight>,
}

// Boxing the request would bring back the allocation this saves; hyper keeps the future
// in its connection's own allocation, once.
#[allow(clippy::large_enum_variant)]
enum Call<S: tower_service::Service<Request<Incoming>>> {
    /// Waiting for the service to be ready.
    Ready(S, Request<Incoming>),
    /// Called: its answer.
    Called(S::Future),
    Done,
}

impl<S, B> Future for TrackedFuture<S>
where
    S: tower_service::Service<Request<Incoming>, Response = Response<B>> + Unpin,
    S::Future: Unpin,
    S::Error: Into<BoxError>,
{
    type Output = Result<Response<InFlightBody<B>>, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if let Call::Ready(service, _) = &mut this.state {
            if let Err(e) = ready!(service.poll_ready(cx)) {
                this.state = Call::Done;
                return Poll::Ready(Err(e.into()));
            }
            if let Call::Ready(mut service, request) =
                std::mem::replace(&mut this.state, Call::Done)
            {
                this.state = Call::Called(service.call(request));
            }
        }
        let Call::Called(future) = &mut this.state else {
            return Poll::Ready(Err("the answer was already taken".into()));
        };
        let answer = ready!(Pin::new(future).poll(cx));
        this.state = Call::Done;
        let guard = this.guard.take();
        Poll::Ready(answer.map_err(Into::into).map(|response| {
            response.map(|body| InFlightBody { body: Box::pin(body), _guard: guard })
        }))
    }
}

/// Counts a request in flight while alive.
struct InFlight(Arc<Activity>);

impl InFlight {
    fn new(activity: Arc<Activity>) -> Self {
        activity.in_flight.fetch_add(1, Relaxed);
        activity.touch();
        InFlight(activity)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.touch();
        self.0.in_flight.fetch_sub(1, Relaxed);
    }
}

/// An answer's body, the request in flight until it is dropped.
pub struct InFlightBody<B> {
    body: Pin<Box<B>>,
    _guard: Option<InFlight>,
}

impl<B> Body for InFlightBody<B>
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        self.body.as_mut().poll_frame(cx).map_err(Into::into)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

fn is_transient(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
    ) || e.raw_os_error().is_some_and(|code| code == 23 || code == 24) // ENFILE, EMFILE
}

/// Raises the soft limit on open files to the hard limit (as Go and many servers do):
/// each connection costs a descriptor, and one more to the upstream while a request is
/// forwarded. Returns the soft limit now in force.
pub fn raise_fd_limit() -> Option<u64> {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).ok()?;
    if soft < hard && setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_ok() {
        return Some(hard);
    }
    Some(soft)
}
