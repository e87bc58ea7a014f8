//! The comparison layer of the gateway benchmarks: a tower layer doing, on a serde_json
//! `Value` tree, the checks `rpcscan_tower::McpLayer` does on the benchmarks' traffic, the
//! way a gateway built on serde does them: the POST body into a tree, the envelope checked
//! on the tree, `Mcp-Method` / `Mcp-Name` compared with it, the tool deny-list applied, and
//! a JSON answer to a request parsed into a tree to check its id.
//!
//! What a tree cannot do is left out (and costs serde nothing here): duplicate keys are
//! silently merged by `Value`, so the duplicate-member and duplicate-routing-key checks
//! have no equivalent. There are no timeouts either (`McpLayer` arms a timer per request).
//!
//! Its inner service gets the same request body type as `McpLayer`'s
//! ([`rpcscan_tower::RequestBody`]: the read body `Left`, any other untouched `Right`), so
//! the same inner service (`rpcscan_tower::gateway::Upstream`, or a `service_fn`) goes
//! behind either layer.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt, Either, Full, Limited};
use rpcscan_tower::{BoxError, RequestBody};
use serde_json::Value;
use tower_layer::Layer;
use tower_service::Service;

/// The largest body, as the rpcscan layer's default.
const MAX_BODY: usize = 4 * 1024 * 1024;

/// The body [`SerdeService`] answers with: its own answer or a checked JSON body (`Left`),
/// or the inner service's, untouched (`Right`).
pub type SerdeBody<B> = Either<Full<Bytes>, B>;

/// The serde_json `Value` layer: tools whose name starts with the prefix are refused, as
/// `rpcscan gateway --deny-tool 'PREFIX*'` refuses them.
#[derive(Clone, Debug)]
pub struct SerdeLayer {
    deny_tool_prefix: Arc<str>,
}

impl SerdeLayer {
    /// Refuses `tools/call` of tools named `deny_tool_prefix…` with -32602.
    pub fn new(deny_tool_prefix: &str) -> Self {
        SerdeLayer { deny_tool_prefix: deny_tool_prefix.into() }
    }
}

impl<S> Layer<S> for SerdeLayer {
    type Service = SerdeService<S>;

    fn layer(&self, inner: S) -> SerdeService<S> {
        SerdeService { inner, deny_tool_prefix: Arc::clone(&self.deny_tool_prefix) }
    }
}

/// The service [`SerdeLayer`] wraps around an inner service.
#[derive(Clone, Debug)]
pub struct SerdeService<S> {
    inner: S,
    deny_tool_prefix: Arc<str>,
}

fn answer<B>(status: StatusCode, body: String) -> Response<SerdeBody<B>> {
    let mut response = Response::new(Either::Left(Full::new(Bytes::from(body))));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(http::header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn error<B>(status: StatusCode, id: &Value, code: i64, message: &str) -> Response<SerdeBody<B>> {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    answer(status, body.to_string())
}

/// The envelope checks of a request, notification or response, on the tree.
fn valid_envelope(msg: &serde_json::Map<String, Value>) -> bool {
    if msg.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return false;
    }
    let id_ok = match msg.get("id") {
        None | Some(Value::Null | Value::String(_)) => true,
        Some(Value::Number(n)) => n.is_i64() || n.is_u64(),
        Some(_) => false,
    };
    let allowed = ["jsonrpc", "id", "method", "params", "result", "error"];
    if !id_ok || msg.keys().any(|k| !allowed.contains(&k.as_str())) {
        return false;
    }
    match (msg.get("method"), msg.get("result"), msg.get("error")) {
        (Some(Value::String(_)), None, None) => {
            matches!(msg.get("params"), None | Some(Value::Object(_) | Value::Array(_)))
        }
        (None, Some(_), None) => msg.contains_key("id"),
        (None, None, Some(Value::Object(e))) => {
            msg.contains_key("id")
                && e.get("code").is_some_and(Value::is_i64)
                && e.get("message").is_some_and(Value::is_string)
        }
        _ => false,
    }
}

impl<S, B, ResB> Service<Request<B>> for SerdeService<S>
where
    S: Service<Request<RequestBody<B>>, Response = Response<ResB>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
    ResB: Body<Data = Bytes> + Send + 'static,
    ResB::Error: Into<BoxError>,
{
    type Response = Response<SerdeBody<ResB>>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let deny = Arc::clone(&self.deny_tool_prefix);
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            if parts.method != http::Method::POST {
                let request = Request::from_parts(parts, Either::Right(body));
                return Ok(inner.call(request).await?.map(Either::Right));
            }
            let Ok(collected) = Limited::new(body, MAX_BODY).collect().await else {
                return Ok(error(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    &Value::Null,
                    -32600,
                    "Invalid Request",
                ));
            };
            let bytes = collected.to_bytes();
            let msg: Value = match serde_json::from_slice(&bytes) {
                Ok(msg) => msg,
                Err(_) => {
                    return Ok(error(StatusCode::BAD_REQUEST, &Value::Null, -32700, "Parse error"))
                }
            };
            let Some(object) = msg.as_object().filter(|m| valid_envelope(m)) else {
                return Ok(error(StatusCode::BAD_REQUEST, &Value::Null, -32600, "Invalid Request"));
            };
            let id = object.get("id").cloned().unwrap_or(Value::Null);
            let method = object.get("method").and_then(Value::as_str);
            let tool = object.get("params").and_then(|p| p.get("name")).and_then(Value::as_str);
            let header = |name: &str| parts.headers.get(name).and_then(|v| v.to_str().ok());
            if header("mcp-method").is_some_and(|h| Some(h) != method)
                || header("mcp-name").is_some_and(|h| Some(h) != tool)
            {
                return Ok(error(StatusCode::BAD_REQUEST, &id, -32020, "Header mismatch"));
            }
            if method == Some("tools/call") && tool.is_none_or(|t| t.starts_with(&*deny)) {
                return Ok(error(StatusCode::OK, &id, -32602, "Unknown tool"));
            }
            let is_request = method.is_some() && object.contains_key("id");
            let request = Request::from_parts(parts, Either::Left(Full::new(bytes)));
            let response = inner.call(request).await?;
            let json = response
                .headers()
                .get(http::header::CONTENT_TYPE)
                .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
            if !(is_request && json && response.status().is_success()) {
                return Ok(response.map(Either::Right));
            }
            let (parts, body) = response.into_parts();
            let answered = match Limited::new(body, 16 * MAX_BODY).collect().await {
                Ok(collected) => {
                    let bytes = collected.to_bytes();
                    match serde_json::from_slice::<Value>(&bytes) {
                        Ok(Value::Object(m)) if valid_envelope(&m) && m.get("id") == Some(&id) => {
                            Some(bytes)
                        }
                        _ => None,
                    }
                }
                Err(_) => None,
            };
            Ok(match answered {
                Some(bytes) => Response::from_parts(parts, Either::Left(Full::new(bytes))),
                None => error(StatusCode::BAD_GATEWAY, &id, -32603, "Bad Gateway"),
            })
        })
    }
}
