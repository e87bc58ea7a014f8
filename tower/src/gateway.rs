//! A reverse proxy for one upstream MCP Streamable HTTP server (hyper on both sides), to
//! put [`McpLayer`](crate::McpLayer) in front of a server written in any language.
//!
//! [`Upstream`] is the inner service: it sends each request to the upstream's address with
//! its method, path, query, headers (hop-by-hop ones removed) and body, and streams the
//! answer back, so POST, GET (server streams) and DELETE (session end) all pass, with
//! `Mcp-Session-Id` and the other headers. [`serve`] runs HTTP/1.1 on a listener.
//!
//! ```no_run
//! use rpcscan_tower::{gateway, McpLayer};
//! use tower::Layer;
//!
//! # async fn run() -> std::io::Result<()> {
//! let upstream = gateway::Upstream::new("http://127.0.0.1:3001/mcp".parse().unwrap())?;
//! let service = McpLayer::new().allow_origins(["http://localhost"]).layer(upstream);
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! gateway::serve(listener, service).await
//! # }
//! ```

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{
    HeaderName, CONNECTION, CONTENT_TYPE, HOST, TE, TRAILER, TRANSFER_ENCODING, UPGRADE,
};
use http::uri::{PathAndQuery, Scheme};
use http::{HeaderValue, Request, Response, StatusCode, Uri};
use http_body::Body;
use http_body_util::{Either, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rpcscan::response::{ErrorResponse, INTERNAL_ERROR};
use rpcscan::OwnedMessage;
use tokio::net::{TcpListener, TcpStream};
use tower_service::Service;

use crate::{BoxError, RequestBody};

/// The body [`Upstream`] answers with: the upstream's, or its own 502.
pub type UpstreamBody = Either<Incoming, Full<Bytes>>;

/// Headers that describe one connection, not the message (RFC 9110 §7.6.1).
const HOP_BY_HOP: [HeaderName; 6] =
    [CONNECTION, TE, TRAILER, TRANSFER_ENCODING, UPGRADE, HeaderName::from_static("keep-alive")];

/// The inner service of a gateway: forwards every request to one upstream (plain
/// `http://`). An unreachable upstream gets the client a 502 with a JSON-RPC -32603
/// error for the request's id (read from the layer's scan), never a dropped connection.
#[derive(Clone, Debug)]
pub struct Upstream(Arc<Inner>);

/// How long an idle upstream connection is kept (hyper's pooled client's default).
const IDLE: Duration = Duration::from_secs(90);

/// What an [`Upstream`] holds, shared by its clones (the gateway clones it per request).
#[derive(Debug)]
struct Inner {
    /// Idle keep-alive connections to the upstream, the most recently used last: taken from
    /// the back, those idle longer than [`IDLE`] dropped from the front.
    idle: Mutex<VecDeque<(SendRequest<RequestBody<Incoming>>, Instant)>>,
    /// The upstream's host (without IPv6 brackets) and port, to connect to.
    host_name: String,
    port: u16,
    path: Option<PathAndQuery>,
    /// The target (origin form) of a request without a query when `path` is set, built once.
    fixed: Option<Uri>,
    /// The `Host` header every forwarded request carries, built once.
    host: HeaderValue,
}

impl Upstream {
    /// Forwards to `uri` (`http://host:port[/path]`). When `uri` has a path other than
    /// `/`, every request goes to that path (with the request's own query); otherwise the
    /// request's path is kept.
    pub fn new(uri: Uri) -> io::Result<Self> {
        let invalid = |what| io::Error::new(io::ErrorKind::InvalidInput, what);
        if uri.scheme() != Some(&Scheme::HTTP) {
            return Err(invalid("the upstream must be an http:// URL"));
        }
        let authority =
            uri.authority().cloned().ok_or_else(|| invalid("the upstream URL has no host"))?;
        let path = uri.path_and_query().filter(|p| p.path() != "/").cloned();
        let host = HeaderValue::from_str(authority.as_str())
            .map_err(|_| invalid("the upstream's host is not a header value"))?;
        let host_name = authority.host().trim_start_matches('[').trim_end_matches(']').to_owned();
        let port = authority.port_u16().unwrap_or(80);
        let mut upstream =
            Inner { idle: Mutex::new(VecDeque::new()), host_name, port, path, fixed: None, host };
        if let Some(path) = &upstream.path {
            // The URL's own query goes with the path only when the request has none.
            let fixed = upstream.build_target(path.as_str());
            upstream.fixed = Some(fixed.map_err(|_| invalid("the upstream URL is not a target"))?);
        }
        Ok(Upstream(Arc::new(upstream)))
    }
}

impl Inner {
    fn target(&self, uri: &Uri) -> Result<Uri, http::Error> {
        if let (Some(fixed), None) = (&self.fixed, uri.query()) {
            return Ok(fixed.clone());
        }
        let path = match (&self.path, uri.query()) {
            (Some(base), Some(query)) => format!("{}?{query}", base.path()),
            (Some(base), None) => base.as_str().to_owned(),
            (None, _) => uri.path_and_query().map_or("/", PathAndQuery::as_str).to_owned(),
        };
        self.build_target(path)
    }

    fn build_target<P>(&self, path: P) -> Result<Uri, http::Error>
    where
        PathAndQuery: TryFrom<P>,
        <PathAndQuery as TryFrom<P>>::Error: Into<http::Error>,
    {
        // Origin form (`/path?query`): the request goes to the upstream's own address.
        Uri::builder().path_and_query(path).build()
    }

    /// A pooled connection ready for a request, if one is idle; closed ones are dropped.
    fn checkout(&self) -> Option<SendRequest<RequestBody<Incoming>>> {
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        while let Some((sender, _)) = idle.pop_back() {
            if sender.is_ready() {
                return Some(sender);
            }
        }
        None
    }

    /// Returns a connection to the pool once its answer has been read (at once when it
    /// has, as for short answers; otherwise from a task waiting for it, as for streams).
    fn checkin(self: &Arc<Self>, mut sender: SendRequest<RequestBody<Incoming>>) {
        if sender.is_ready() {
            self.put(sender);
        } else if !sender.is_closed() {
            let upstream = Arc::clone(self);
            tokio::spawn(async move {
                if sender.ready().await.is_ok() {
                    upstream.put(sender);
                }
            });
        }
    }

    fn put(&self, sender: SendRequest<RequestBody<Incoming>>) {
        let now = Instant::now();
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        while idle.front().is_some_and(|(_, since)| now.duration_since(*since) > IDLE) {
            idle.pop_front();
        }
        idle.push_back((sender, now));
    }

    /// A new connection to the upstream, its connection task spawned.
    async fn connect(&self) -> Result<SendRequest<RequestBody<Incoming>>, BoxError> {
        let stream = TcpStream::connect((self.host_name.as_str(), self.port)).await?;
        // Requests to one upstream over loopback or a LAN: Nagle's delay would only hold
        // back the last segment of a message.
        stream.set_nodelay(true)?;
        let (sender, connection) =
            hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        Ok(sender)
    }

    /// Sends `request` on an idle connection, or a new one when none is idle. A request
    /// that a pooled connection gave back unsent (the upstream had closed it while idle,
    /// before any of the request was written) is sent once more on a new connection, as
    /// hyper's pooled client does.
    async fn send(
        self: &Arc<Self>,
        mut request: Request<RequestBody<Incoming>>,
    ) -> Result<Response<Incoming>, BoxError> {
        if let Some(mut sender) = self.checkout() {
            match sender.try_send_request(request).await {
                Ok(response) => {
                    self.checkin(sender);
                    return Ok(response);
                }
                Err(mut e) => match e.take_message() {
                    Some(unsent) => request = unsent,
                    None => return Err(e.into_error().into()),
                },
            }
        }
        let mut sender = self.connect().await?;
        let response = sender.send_request(request).await?;
        self.checkin(sender);
        Ok(response)
    }
}

impl Service<Request<RequestBody<Incoming>>> for Upstream {
    type Response = Response<UpstreamBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<UpstreamBody>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<RequestBody<Incoming>>) -> Self::Future {
        let (mut parts, body) = request.into_parts();
        // The layer's scan of a POST: the 502 can answer the request's id.
        let id = parts.extensions.get::<OwnedMessage>().and_then(OwnedMessage::id_bytes);
        let target = self.0.target(&parts.uri);
        let upstream = Arc::clone(&self.0);
        Box::pin(async move {
            let Ok(target) = target else {
                return Ok(bad_gateway(id.as_deref()));
            };
            parts.uri = target;
            // The client may speak HTTP/2 to the gateway; the upstream is HTTP/1.1.
            parts.version = http::Version::HTTP_11;
            strip_hop_by_hop(&mut parts.headers);
            parts.headers.insert(HOST, upstream.host.clone());
            match upstream.send(Request::from_parts(parts, body)).await {
                Ok(response) => {
                    let (mut parts, body) = response.into_parts();
                    strip_hop_by_hop(&mut parts.headers);
                    Ok(Response::from_parts(parts, Either::Left(body)))
                }
                Err(_) => Ok(bad_gateway(id.as_deref())),
            }
        })
    }
}

fn strip_hop_by_hop(headers: &mut http::HeaderMap) {
    // Most messages have none (`Connection` is among them): one pass over the names
    // instead of a hashed removal of each.
    if !headers.keys().any(|name| HOP_BY_HOP.contains(name)) {
        return;
    }
    // Headers named by `Connection` are hop-by-hop too.
    if headers.contains_key(CONNECTION) {
        let named: Vec<HeaderName> = headers
            .get_all(CONNECTION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .filter_map(|name| HeaderName::from_bytes(name.trim().as_bytes()).ok())
            .collect();
        for name in &named {
            headers.remove(name);
        }
    }
    for name in &HOP_BY_HOP {
        headers.remove(name);
    }
}

fn bad_gateway(id: Option<&[u8]>) -> Response<UpstreamBody> {
    let body = ErrorResponse::new(INTERNAL_ERROR, "Bad Gateway: upstream unreachable");
    let body = match id {
        Some(id) => body.id(id),
        None => body,
    }
    .to_vec();
    let mut response = Response::new(Either::Right(Full::new(Bytes::from(body))));
    *response.status_mut() = StatusCode::BAD_GATEWAY;
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    // The layer in front reports this as the gateway's own answer, not the upstream's.
    response.extensions_mut().insert(crate::service::Unreachable);
    response
}

/// Serves `service` over HTTP/1.1 on `listener`, one task per connection, until accepting
/// fails. A failing connection ends alone; the gateway stays up.
pub async fn serve<S, B>(listener: TcpListener, service: S) -> io::Result<()>
where
    S: Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            // The peer gave up between SYN and accept, or descriptors ran out for a
            // moment: neither ends the gateway.
            Err(e) if is_transient(&e) => {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                continue;
            }
            Err(e) => return Err(e),
        };
        // Answers are written whole; Nagle's delay would only hold back their last segment.
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(service.clone());
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hop_by_hop_headers_and_those_connection_names_are_removed() {
        let mut headers = http::HeaderMap::new();
        headers.insert(CONNECTION, HeaderValue::from_static("x-a, Keep-Alive"));
        headers.append(CONNECTION, HeaderValue::from_static("x-b"));
        for name in ["x-a", "x-b", "keep-alive", "te", "upgrade", "content-type", "mcp-name"] {
            headers.insert(HeaderName::from_static(name), HeaderValue::from_static("v"));
        }
        strip_hop_by_hop(&mut headers);
        let mut left: Vec<&str> = headers.keys().map(HeaderName::as_str).collect();
        left.sort_unstable();
        assert_eq!(left, ["content-type", "mcp-name"]);

        // None of them: nothing changes.
        let kept = headers.clone();
        strip_hop_by_hop(&mut headers);
        assert_eq!(headers, kept);
    }
}
