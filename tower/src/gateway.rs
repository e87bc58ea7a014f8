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

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::header::{
    HeaderName, CONNECTION, CONTENT_TYPE, HOST, TE, TRAILER, TRANSFER_ENCODING, UPGRADE,
};
use http::uri::{PathAndQuery, Scheme};
use http::{HeaderValue, Request, Response, StatusCode, Uri};
use http_body::Body;
use http_body_util::{Either, Full};
use hyper::body::Incoming;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::service::TowerToHyperService;
use rpcscan::response::{ErrorResponse, INTERNAL_ERROR};
use rpcscan::OwnedMessage;
use tokio::net::TcpListener;
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

/// What an [`Upstream`] holds, shared by its clones (the gateway clones it per request).
#[derive(Debug)]
struct Inner {
    client: Client<HttpConnector, RequestBody<Incoming>>,
    authority: http::uri::Authority,
    path: Option<PathAndQuery>,
    /// The target of a request without a query when `path` is set, built once.
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
        // Requests to one upstream over loopback or a LAN: Nagle's delay would only hold
        // back the last segment of a message. Idle connections are kept and reused (the
        // pool's default), so a busy gateway does not reconnect per request.
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        let client = Client::builder(TokioExecutor::new()).build(connector);
        let mut upstream = Inner { client, authority, path, fixed: None, host };
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
        Uri::builder()
            .scheme(Scheme::HTTP)
            .authority(self.authority.clone())
            .path_and_query(path)
            .build()
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
            match upstream.client.request(Request::from_parts(parts, body)).await {
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
