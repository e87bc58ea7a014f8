//! [`McpService`]: the request path (head checks, body limit, one scan, header check,
//! routing keys, allow-lists, policy) and the response path (JSON checked, SSE observed).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use bytes::Bytes;
use http::header::{CONTENT_LENGTH, CONTENT_TYPE, ORIGIN};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::{Either, Full};
use rpcscan::mcp::{Mcp, McpHeaders};
use rpcscan::response::{
    ErrorResponse, HEADER_MISMATCH, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST,
    METHOD_NOT_FOUND,
};
use rpcscan::{Kind, Message, OwnedMessage, Str, Validation};
use tower_service::Service;

use crate::body::{ResponseBody, SseInspector};
use crate::collect::{before, collect, CollectError};
use crate::keys::RoutingKeys;
use crate::layer::{HeaderCheck, Shared};
use crate::observe::{Answer, Direction, Event, Rejection};
use crate::policy::Decision;
use crate::trace::McpSpan;
use crate::BoxError;

/// The body the inner service receives: a POST's body as the bytes that were scanned
/// (`Left`), any other request's body untouched (`Right`).
pub type RequestBody<B> = Either<Full<Bytes>, B>;

/// The future of [`McpService`].
pub type ResponseFuture<B, E> =
    Pin<Box<dyn Future<Output = Result<Response<ResponseBody<B>>, E>> + Send>>;

const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");
const MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");

/// The service [`crate::McpLayer`] wraps around an inner service.
#[derive(Clone)]
pub struct McpService<S> {
    inner: S,
    shared: Arc<Shared>,
}

impl<S> McpService<S> {
    pub(crate) fn new(inner: S, shared: Arc<Shared>) -> Self {
        McpService { inner, shared }
    }

    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }
}

impl<S: std::fmt::Debug> std::fmt::Debug for McpService<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpService").field("inner", &self.inner).finish_non_exhaustive()
    }
}

impl<S, B, ResB> Service<Request<B>> for McpService<S>
where
    S: Service<Request<RequestBody<B>>, Response = Response<ResB>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
    ResB: Body<Data = Bytes> + Send + 'static,
    ResB::Error: Into<BoxError>,
{
    type Response = Response<ResponseBody<ResB>>;
    type Error = S::Error;
    type Future = ResponseFuture<ResB, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        // The ready service answers this call; its clone waits for the next poll_ready.
        let clone = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, clone);
        Box::pin(handle(inner, Arc::clone(&self.shared), request))
    }
}

/// Marks a response of the inner service as the gateway's own answer (an unreachable
/// upstream), not the upstream's.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Unreachable;

/// What the layer answers instead of the inner service.
struct Reject {
    status: StatusCode,
    body: Vec<u8>,
    rejection: Rejection,
    code: i64,
}

impl Reject {
    fn new(
        status: StatusCode,
        rejection: Rejection,
        response: ErrorResponse<'_>,
        code: i64,
    ) -> Self {
        Reject { status, body: response.to_vec(), rejection, code }
    }

    fn respond<B>(self) -> Response<ResponseBody<B>> {
        reply(self.status, self.body)
    }
}

fn reply<B>(status: StatusCode, body: Vec<u8>) -> Response<ResponseBody<B>> {
    let mut response = Response::new(ResponseBody::full(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// The per-request context of the response path.
struct Exchange {
    shared: Arc<Shared>,
    /// `Mcp-Session-Id` (a `HeaderValue` shares the request's bytes: no copy).
    session: Option<HeaderValue>,
    start: Instant,
}

impl Exchange {
    /// `bytes`: the body, when it was read.
    fn observe_rejected(&self, reject: &Reject, bytes: Option<&[u8]>) {
        self.shared.observer.message(&Event {
            direction: Direction::ClientToServer,
            session: text(self.session.as_ref()),
            kind: Kind::Invalid,
            method: None,
            tool: None,
            error_code: Some(reject.code),
            latency: None,
            rejected: Some(reject.rejection),
            bytes,
            status: None,
            answer: Some(Answer::new(reject.status, &reject.body)),
            request_id: None,
        });
    }

    /// The layer answers for the upstream, which did not answer (in time, or at all):
    /// `request` is the POST's, when it was one.
    fn answer_for_upstream<B>(
        &self,
        rejection: Rejection,
        status: StatusCode,
        body: Vec<u8>,
        session: Option<&HeaderValue>,
        request: Option<&OwnedMessage>,
        span: &McpSpan,
    ) -> Response<ResponseBody<B>> {
        span.rejected(rejection, &body);
        let asked = request.filter(|r| r.kind() == Kind::Request);
        self.shared.observer.message(&Event {
            direction: Direction::ServerToClient,
            session: text(session.or(self.session.as_ref())),
            kind: Kind::Invalid,
            method: asked.and_then(OwnedMessage::method),
            tool: None,
            error_code: Some(INTERNAL_ERROR),
            latency: Some(self.start.elapsed()),
            rejected: Some(rejection),
            bytes: None,
            status: None,
            answer: Some(Answer::new(status, &body)),
            request_id: asked.and_then(|r| r.id()).map(|id| id.raw()),
        });
        reply(status, body)
    }
}

async fn handle<S, B, ResB>(
    mut inner: S,
    shared: Arc<Shared>,
    request: Request<B>,
) -> Result<Response<ResponseBody<ResB>>, S::Error>
where
    S: Service<Request<RequestBody<B>>, Response = Response<ResB>>,
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
    ResB: Body<Data = Bytes>,
    ResB::Error: Into<BoxError>,
{
    let start = Instant::now();
    let deadline =
        shared.request_timeout.and_then(|t| tokio::time::Instant::from_std(start).checked_add(t));
    let (mut parts, body) = request.into_parts();
    let exchange = Exchange { session: session_id(&parts.headers), shared, start };
    let shared = &exchange.shared;

    if let Some(reject) = check_head(shared, &parts.headers) {
        exchange.observe_rejected(&reject, None);
        return Ok(reject.respond());
    }
    if parts.method != Method::POST {
        let request = Request::from_parts(parts, Either::Right(body));
        let Ok(response) = before(deadline, inner.call(request)).await else {
            let (status, body) = upstream_timeout(None);
            let none = McpSpan::none();
            return Ok(exchange.answer_for_upstream(
                Rejection::Timeout,
                status,
                body,
                None,
                None,
                &none,
            ));
        };
        return Ok(respond(response?, None, &exchange, deadline, McpSpan::none()).await);
    }

    let bytes = match collect(body, shared.max_body_size, shared.idle_timeout, deadline).await {
        Ok(bytes) => bytes,
        Err(e) => {
            let (status, rejection, message) = match e {
                CollectError::TooLarge => (
                    StatusCode::PAYLOAD_TOO_LARGE,
                    Rejection::BodyTooLarge,
                    "Invalid Request: body too large",
                ),
                CollectError::Timeout => (
                    StatusCode::REQUEST_TIMEOUT,
                    Rejection::Timeout,
                    "Invalid Request: body not received in time",
                ),
                CollectError::Body => (
                    StatusCode::BAD_REQUEST,
                    Rejection::BodyError,
                    "Invalid Request: body could not be read",
                ),
            };
            let reject = Reject::new(
                status,
                rejection,
                ErrorResponse::new(INVALID_REQUEST, message),
                INVALID_REQUEST,
            );
            exchange.observe_rejected(&reject, None);
            return Ok(reject.respond());
        }
    };
    let message = match OwnedMessage::parse(&shared.parser, bytes.clone()) {
        Ok(message) => message,
        Err(invalid) => {
            let reject = Reject::new(
                StatusCode::BAD_REQUEST,
                Rejection::Invalid,
                invalid.response(),
                invalid.code(),
            );
            exchange.observe_rejected(&reject, Some(&bytes));
            return Ok(reject.respond());
        }
    };
    // The routing keys are found once: the tool name goes on to the answer's event, all of
    // them to the request's extensions and its span.
    let (tool, keys, span) = {
        let msg = message.as_message();
        let mcp = msg.mcp();
        let mirrored = Mirrored::new(&parts.headers);
        let keys = RoutingKeys::found(
            message.bytes(),
            &msg,
            &mcp,
            exchange.session.as_ref(),
            mirrored.protocol_version(),
            shared.parser.validation_mode() == Validation::Strict,
        );
        let span = McpSpan::client_message(&msg, &keys, parts.version, shared.on_span.as_ref());
        let verdict = check_message(shared, &mirrored, &msg, &mcp);
        shared.observer.message(&Event {
            direction: Direction::ClientToServer,
            session: text(exchange.session.as_ref()),
            kind: msg.kind(),
            method: msg.method(),
            tool: mcp.tool_name(),
            error_code: match &verdict {
                Err(reject) => Some(reject.code),
                Ok(()) => msg.error_code().and_then(|c| c.as_i64()),
            },
            latency: None,
            rejected: verdict.as_ref().err().map(|r| r.rejection),
            bytes: Some(message.bytes()),
            status: None,
            answer: verdict.as_ref().err().map(|r| Answer::new(r.status, &r.body)),
            request_id: None,
        });
        if let Err(reject) = verdict {
            span.rejected(reject.rejection, &reject.body);
            return Ok(reject.respond());
        }
        (mcp.tool_name(), keys, span)
    };

    parts.extensions.insert(message.clone());
    parts.extensions.insert(keys);
    let request = Request::from_parts(parts, Either::Left(Full::new(message.bytes().clone())));
    // What the inner service does on the message's behalf happens inside its span.
    let call = span.instrument(|| inner.call(request));
    let Ok(response) = before(deadline, call).await else {
        let (status, body) = upstream_timeout(Some(&message));
        let rejection = Rejection::Timeout;
        return Ok(exchange.answer_for_upstream(
            rejection,
            status,
            body,
            None,
            Some(&message),
            &span,
        ));
    };
    Ok(respond(response?, Some((&message, tool)), &exchange, deadline, span).await)
}

/// Checks that need only the head: header block size and `Origin`.
fn check_head(shared: &Shared, headers: &HeaderMap) -> Option<Reject> {
    let size = headers.iter().fold(0usize, |n, (name, value)| {
        n.saturating_add(name.as_str().len()).saturating_add(value.len())
    });
    if size > shared.max_header_size {
        return Some(Reject::new(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            Rejection::HeadersTooLarge,
            ErrorResponse::new(INVALID_REQUEST, "Invalid Request: headers too large"),
            INVALID_REQUEST,
        ));
    }
    if let Some(allowed) = &shared.origins {
        if headers.get_all(ORIGIN).iter().any(|o| !allowed.contains(o)) {
            return Some(Reject::new(
                StatusCode::FORBIDDEN,
                Rejection::Origin,
                ErrorResponse::new(INVALID_REQUEST, "Forbidden: Origin not allowed"),
                INVALID_REQUEST,
            ));
        }
    }
    if headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok())
        .is_some_and(|n| n > shared.max_body_size as u64)
    {
        return Some(Reject::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            Rejection::BodyTooLarge,
            ErrorResponse::new(INVALID_REQUEST, "Invalid Request: body too large"),
            INVALID_REQUEST,
        ));
    }
    None
}

/// The headers a 2026-07-28 request mirrors its body in (`Mcp-Method`, `Mcp-Name`,
/// `MCP-Protocol-Version`), each looked up once: its first value, and whether there is a
/// second.
#[derive(Clone, Copy)]
struct Mirrored<'h>([(Option<&'h HeaderValue>, bool); 3]);

impl<'h> Mirrored<'h> {
    fn new(headers: &'h HeaderMap) -> Self {
        let lookup = |name: &HeaderName| {
            let mut values = headers.get_all(name).iter();
            (values.next(), values.next().is_some())
        };
        Mirrored([lookup(&MCP_METHOD), lookup(&MCP_NAME), lookup(&MCP_PROTOCOL_VERSION)])
    }

    fn protocol_version(&self) -> Option<&'h HeaderValue> {
        self.0[2].0
    }
}

/// The checks on a valid client message, in order: MCP headers, duplicate routing keys,
/// method allow-list, tool allow-list, the user's policy.
fn check_message(
    shared: &Shared,
    mirrored: &Mirrored<'_>,
    msg: &Message<'_>,
    mcp: &Mcp<'_>,
) -> Result<(), Reject> {
    let id = msg.id().map(|id| id.raw());
    // Each header looked up once: its first value, and whether there is a second.
    let mirrored = mirrored.0;
    let applies = match shared.header_check {
        HeaderCheck::Always => true,
        HeaderCheck::Off => false,
        HeaderCheck::WhenPresent => {
            // A duplicated `_meta` says nothing about the version: the routing-key check
            // below answers it.
            mirrored[..2].iter().any(|(first, _)| first.is_some())
                || mcp.protocol_version().unique().is_some()
        }
    };
    if applies {
        // Two values of one header: an intermediary may route on either; the check on one.
        let messages = [
            "Header mismatch: Mcp-Method header appears more than once",
            "Header mismatch: Mcp-Name header appears more than once",
            "Header mismatch: MCP-Protocol-Version header appears more than once",
        ];
        for ((_, twice), message) in mirrored.iter().zip(messages) {
            if *twice {
                return Err(Reject::new(
                    StatusCode::BAD_REQUEST,
                    Rejection::HeaderMismatch,
                    with_id(ErrorResponse::new(HEADER_MISMATCH, message), id),
                    HEADER_MISMATCH,
                ));
            }
        }
        let [(method, _), (name, _), (version, _)] = mirrored;
        let mut check = McpHeaders::new();
        if let Some(v) = method {
            check = check.method(v.as_bytes());
        }
        if let Some(v) = name {
            check = check.name(v.as_bytes());
        }
        if let Some(v) = version {
            check = check.protocol_version(v.as_bytes());
        }
        if let Err(mismatch) = check.check_with(msg, mcp) {
            return Err(Reject {
                status: StatusCode::from_u16(mismatch.http_status())
                    .unwrap_or(StatusCode::BAD_REQUEST),
                body: mismatch.response().to_vec(),
                rejection: Rejection::HeaderMismatch,
                code: HEADER_MISMATCH,
            });
        }
    }

    let asks = matches!(msg.kind(), Kind::Request | Kind::Notification);
    if asks
        && shared.reject_duplicate_routing_keys
        && [mcp.name(), mcp.uri(), mcp.meta()].iter().any(|f| f.is_duplicate())
    {
        return Err(Reject::new(
            StatusCode::BAD_REQUEST,
            Rejection::DuplicateRoutingKey,
            with_id(
                ErrorResponse::new(
                    INVALID_REQUEST,
                    "Invalid Request: duplicate routing key in params",
                ),
                id,
            ),
            INVALID_REQUEST,
        ));
    }
    let deny = |code: i64, message: &str, status: Option<StatusCode>, rejection| {
        let status = status.unwrap_or(if msg.kind() == Kind::Request {
            StatusCode::OK
        } else {
            StatusCode::BAD_REQUEST
        });
        Reject::new(status, rejection, with_id(ErrorResponse::new(code, message), id), code)
    };
    if let (true, Some(methods), Some(method)) = (asks, &shared.methods, msg.method()) {
        if !methods.allows(method) {
            return Err(deny(
                METHOD_NOT_FOUND,
                "Method not found",
                None,
                Rejection::MethodNotAllowed,
            ));
        }
    }
    if let (Some(tools), Some(method)) = (&shared.tools, msg.method()) {
        if asks && method == "tools/call" && !mcp.tool_name().is_some_and(|t| tools.allows(t)) {
            return Err(deny(
                INVALID_PARAMS,
                "Invalid params: unknown tool",
                None,
                Rejection::ToolNotAllowed,
            ));
        }
    }
    match shared.policy.decide(msg, mcp) {
        Decision::Forward => Ok(()),
        Decision::Deny(denial) => {
            Err(deny(denial.code(), denial.message(), denial.http_status(), Rejection::Policy))
        }
    }
}

/// `response` echoing `id` (`null` when `None`).
fn with_id<'r>(response: ErrorResponse<'r>, id: Option<&'r [u8]>) -> ErrorResponse<'r> {
    match id {
        Some(id) => response.id(id),
        None => response,
    }
}

/// The 504 for a request the upstream did not answer in time.
fn upstream_timeout(request: Option<&OwnedMessage>) -> (StatusCode, Vec<u8>) {
    let response = ErrorResponse::new(INTERNAL_ERROR, "Gateway Timeout: no answer from upstream");
    let id = request.and_then(|r| r.id());
    (StatusCode::GATEWAY_TIMEOUT, with_id(response, id.as_ref().map(|id| id.raw())).to_vec())
}

/// The 502 for a request whose answer the layer could not pass on.
fn bad_answer(request: Option<&OwnedMessage>) -> (StatusCode, Vec<u8>) {
    let response = ErrorResponse::new(
        INTERNAL_ERROR,
        "Bad Gateway: the upstream's answer is not a response to this request",
    );
    let id = request.and_then(|r| r.id());
    (StatusCode::BAD_GATEWAY, with_id(response, id.as_ref().map(|id| id.raw())).to_vec())
}

fn text(value: Option<&HeaderValue>) -> Option<&str> {
    value.and_then(|v| v.to_str().ok())
}

/// `Mcp-Session-Id`, when it is text.
fn session_id(headers: &HeaderMap) -> Option<HeaderValue> {
    headers.get(SESSION_ID).filter(|v| v.to_str().is_ok()).cloned()
}

/// The media types the response path tells apart.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Media {
    Json,
    EventStream,
    Other,
}

/// The media type of a `Content-Type` value (case-insensitive, parameters ignored).
fn media_type(headers: &HeaderMap) -> Media {
    let Some(value) = text(headers.get(CONTENT_TYPE)) else {
        return Media::Other;
    };
    let essence = value.split(';').next().unwrap_or_default().trim();
    if essence.eq_ignore_ascii_case("application/json") {
        Media::Json
    } else if essence.eq_ignore_ascii_case("text/event-stream") {
        Media::EventStream
    } else {
        Media::Other
    }
}

/// The response path: a client notification or response accepted upstream gets 202 and no
/// body; an `application/json` answer to a request is read whole (before the request
/// timeout), scanned and checked to answer the request's id (502 if not, 504 if late); an
/// event stream is passed on as it arrives and observed; anything else passes untouched.
async fn respond<ResB>(
    response: Response<ResB>,
    request: Option<(&OwnedMessage, Option<Str<'_>>)>,
    exchange: &Exchange,
    deadline: Option<tokio::time::Instant>,
    span: McpSpan,
) -> Response<ResponseBody<ResB>>
where
    ResB: Body<Data = Bytes>,
    ResB::Error: Into<BoxError>,
{
    let shared = &exchange.shared;
    let (mut parts, body) = response.into_parts();
    let session = session_id(&parts.headers).or_else(|| exchange.session.clone());
    let media = media_type(&parts.headers);
    let own = parts.extensions.remove::<Unreachable>().is_some();

    let asked = request.as_ref().is_some_and(|(r, _)| r.kind() == Kind::Request);
    if request.is_some() && !asked && parts.status.is_success() {
        // MCP Streamable HTTP: an accepted notification or response gets 202, no body.
        parts.status = StatusCode::ACCEPTED;
        parts.headers.remove(CONTENT_TYPE);
        parts.headers.remove(CONTENT_LENGTH);
        return Response::from_parts(parts, ResponseBody::full(Bytes::new()));
    }
    if media == Media::EventStream {
        let inspector = SseInspector::new(
            shared.parser,
            shared.max_response_size,
            Arc::clone(&shared.observer),
            session,
            request.map(|(r, _)| r.clone()),
            exchange.start,
            shared.idle_timeout,
        )
        .span(span);
        return Response::from_parts(parts, ResponseBody::sse(body, inspector));
    }
    let message = request.map(|(r, _)| r);
    if own {
        let collected = collect(body, shared.max_response_size, None, None).await;
        let body = collected.map_or_else(|_| bad_answer(message).1, |b| b.to_vec());
        let rejection = Rejection::UpstreamUnreachable;
        return exchange.answer_for_upstream(
            rejection,
            parts.status,
            body,
            session.as_ref(),
            message,
            &span,
        );
    }
    if media == Media::Json && !parts.status.is_success() {
        return pass_error_status(parts, body, request, session, exchange, deadline, span).await;
    }
    if !parts.status.is_success() {
        span.failed(parts.status.as_str(), parts.status.canonical_reason().unwrap_or_default());
    }
    let Some((request, tool)) = request.filter(|_| asked) else {
        return Response::from_parts(parts, ResponseBody::plain(body));
    };
    if media != Media::Json {
        return Response::from_parts(parts, ResponseBody::plain(body));
    }

    // The client sees nothing before the body is checked: the request timeout goes on.
    let collected = collect(body, shared.max_response_size, shared.idle_timeout, deadline).await;
    let mut event = Event {
        direction: Direction::ServerToClient,
        session: text(session.as_ref()),
        kind: Kind::Invalid,
        method: request.method(),
        tool,
        error_code: None,
        latency: Some(exchange.start.elapsed()),
        rejected: Some(Rejection::UpstreamMismatch),
        bytes: collected.as_ref().ok().map(|b| &b[..]),
        status: None,
        answer: None,
        request_id: request.id().map(|id| id.raw()),
    };
    let reason = match &collected {
        Ok(bytes) => match shared.parser.parse(bytes) {
            Ok(msg) => {
                event.kind = msg.kind();
                event.error_code = msg.error_code().and_then(|c| c.as_i64());
                if msg.kind().is_response() && msg.id() == request.id() {
                    event.rejected = None;
                    span.answered(&msg);
                }
                None
            }
            Err(invalid) => {
                event.error_code = Some(invalid.code());
                None
            }
        },
        Err(CollectError::TooLarge) => Some(Rejection::BodyTooLarge),
        Err(CollectError::Timeout) => Some(Rejection::Timeout),
        Err(CollectError::Body) => Some(Rejection::BodyError),
    };
    if let Some(reason) = reason {
        event.rejected = Some(reason);
    }
    let own_answer = event.rejected.map(|rejection| match rejection {
        Rejection::Timeout => upstream_timeout(Some(request)),
        _ => bad_answer(Some(request)),
    });
    event.answer = own_answer.as_ref().map(|(status, body)| Answer::new(*status, body));
    if let (Some(rejection), Some((_, body))) = (event.rejected, &own_answer) {
        span.rejected(rejection, body);
    }
    shared.observer.message(&event);
    match (collected, own_answer) {
        (Ok(bytes), None) => Response::from_parts(parts, ResponseBody::full(bytes)),
        (_, answer) => {
            let (status, body) = answer.unwrap_or_else(|| bad_answer(Some(request)));
            reply(status, body)
        }
    }
}

/// An upstream `application/json` answer with an error status (a session that ended:
/// `400` and a JSON-RPC error, often with `"id": null`): read whole, observed with its
/// status and the request it answers, and passed on unchanged. One that cannot be read
/// whole (too large, too slow) is answered 502 / 504 by the layer instead.
async fn pass_error_status<ResB>(
    parts: http::response::Parts,
    body: ResB,
    request: Option<(&OwnedMessage, Option<Str<'_>>)>,
    session: Option<HeaderValue>,
    exchange: &Exchange,
    deadline: Option<tokio::time::Instant>,
    span: McpSpan,
) -> Response<ResponseBody<ResB>>
where
    ResB: Body<Data = Bytes>,
    ResB::Error: Into<BoxError>,
{
    let shared = &exchange.shared;
    let asked = request.filter(|(r, _)| r.kind() == Kind::Request);
    let collected = collect(body, shared.max_response_size, shared.idle_timeout, deadline).await;
    let mut event = Event {
        direction: Direction::ServerToClient,
        session: text(session.as_ref()),
        kind: Kind::Invalid,
        method: asked.and_then(|(r, _)| r.method()),
        tool: asked.and_then(|(_, tool)| tool),
        error_code: None,
        latency: Some(exchange.start.elapsed()),
        rejected: None,
        bytes: None,
        status: Some(parts.status),
        answer: None,
        request_id: asked.and_then(|(r, _)| r.id()).map(|id| id.raw()),
    };
    let bytes = match collected {
        Ok(bytes) => bytes,
        Err(e) => {
            let message = request.map(|(r, _)| r);
            let ((status, body), rejection) = match e {
                CollectError::Timeout => (upstream_timeout(message), Rejection::Timeout),
                CollectError::TooLarge => (bad_answer(message), Rejection::BodyTooLarge),
                CollectError::Body => (bad_answer(message), Rejection::BodyError),
            };
            event.rejected = Some(rejection);
            event.answer = Some(Answer::new(status, &body));
            span.rejected(rejection, &body);
            shared.observer.message(&event);
            return reply(status, body);
        }
    };
    event.bytes = Some(&bytes);
    match shared.parser.parse(&bytes) {
        Ok(msg) => {
            event.kind = msg.kind();
            event.error_code = msg.error_code().and_then(|c| c.as_i64());
            match msg.kind() {
                Kind::Error => span.answered(&msg),
                _ => span.failed(parts.status.as_str(), ""),
            }
        }
        Err(invalid) => {
            event.error_code = Some(invalid.code());
            span.failed(parts.status.as_str(), "");
        }
    }
    shared.observer.message(&event);
    Response::from_parts(parts, ResponseBody::full(bytes))
}
