//! The spans the layer opens (docs/tower.md), seen by a subscriber that records every
//! span's name, parent and fields: names, attributes, errors, and the server's messages
//! on a stream inside their POST's span.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use rpcscan_tower::{McpLayer, RequestBody};
use tower::{service_fn, Layer, ServiceExt};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

#[derive(Clone, Debug, Default)]
struct Recorded {
    target: String,
    name: String,
    parent: Option<u64>,
    fields: BTreeMap<String, String>,
}

#[derive(Clone, Default)]
struct Capture {
    next: Arc<AtomicU64>,
    spans: Arc<Mutex<BTreeMap<u64, Recorded>>>,
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, attributes: &Attributes<'_>) -> Id {
        let id = self.next.fetch_add(1, Ordering::SeqCst) + 1;
        let mut span = Recorded {
            target: attributes.metadata().target().to_owned(),
            name: attributes.metadata().name().to_owned(),
            parent: attributes.parent().map(Id::into_u64),
            ..Recorded::default()
        };
        attributes.record(&mut Fields(&mut span.fields));
        self.spans.lock().unwrap().insert(id, span);
        Id::from_u64(id)
    }

    fn record(&self, id: &Id, values: &Record<'_>) {
        if let Some(span) = self.spans.lock().unwrap().get_mut(&id.into_u64()) {
            values.record(&mut Fields(&mut span.fields));
        }
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, _: &Event<'_>) {}
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

type Answer = fn() -> Response<Full<Bytes>>;

/// Sends `body` with an `Mcp-Session-Id` through the layer (tools `echo`, `fail` and
/// `stream` allowed) to an upstream answering with `answer`; returns the spans recorded.
fn spans(body: &'static str, answer: Answer) -> Vec<Recorded> {
    spans_with(McpLayer::new(), body, answer)
}

fn spans_with(layer: McpLayer, body: &'static str, answer: Answer) -> Vec<Recorded> {
    let capture = Capture::default();
    let spans = capture.spans.clone();
    tracing::subscriber::with_default(capture, || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        runtime.block_on(async {
            let upstream = service_fn(move |_: Request<RequestBody<Full<Bytes>>>| async move {
                Ok::<_, Infallible>(answer())
            });
            let service = layer.allow_tools(["echo", "fail", "stream"]).layer(upstream);
            let request = Request::post("/mcp")
                .header("content-type", "application/json")
                .header("mcp-session-id", "s-1")
                .body(Full::new(Bytes::from_static(body.as_bytes())))
                .unwrap();
            let response = service.oneshot(request).await.unwrap();
            response.into_body().collect().await.unwrap();
        });
    });
    let spans = spans.lock().unwrap();
    let mut all: Vec<_> = spans.values().cloned().collect();
    // Parents by position in the list (ids start at 1, in creation order).
    for span in &mut all {
        span.parent = span.parent.map(|p| p - 1);
    }
    all
}

fn json(body: &'static str) -> Response<Full<Bytes>> {
    Response::builder()
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from_static(body.as_bytes())))
        .unwrap()
}

fn fields(span: &Recorded) -> Vec<(&str, &str)> {
    span.fields.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

#[test]
fn a_tool_call_and_its_tool_error() {
    let spans = spans(
        r#"{"jsonrpc":"2.0","id":"a\u0062c","method":"tools/call","params":{"name":"fail"}}"#,
        || json(r#"{"jsonrpc":"2.0","id":"abc","result":{"content":[],"isError":true}}"#),
    );
    assert_eq!(spans.len(), 1, "{spans:?}");
    assert_eq!((spans[0].target.as_str(), spans[0].name.as_str()), ("rpcscan_tower", "mcp.server"));
    assert_eq!(
        fields(&spans[0]),
        [
            ("error.type", "tool_error"),
            ("gen_ai.operation.name", "execute_tool"),
            ("gen_ai.tool.name", "fail"),
            ("jsonrpc.request.id", "abc"),
            ("mcp.method.name", "tools/call"),
            ("mcp.session.id", "s-1"),
            ("network.protocol.name", "http"),
            ("network.protocol.version", "1.1"),
            ("network.transport", "tcp"),
            ("otel.kind", "server"),
            ("otel.name", "tools/call fail"),
            ("otel.status_code", "error"),
            ("otel.status_description", "the tool's result has isError: true"),
        ]
    );
}

#[test]
fn an_error_answer_and_a_resource() {
    let spans = spans(
        r#"{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"file:///etc/hosts"}}"#,
        || {
            json(
                r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32002,"message":"Resource not found"}}"#,
            )
        },
    );
    let f = &spans[0].fields;
    assert_eq!(f["otel.name"], "resources/read", "the URI stays out of the name");
    assert_eq!(f["mcp.resource.uri"], "file:///etc/hosts");
    assert_eq!(f["jsonrpc.request.id"], "3");
    assert_eq!(f["error.type"], "-32002");
    assert_eq!(f["rpc.response.status_code"], "-32002");
    assert_eq!(f["otel.status_description"], "Resource not found");
    assert!(!f.contains_key("gen_ai.tool.name") && !f.contains_key("rpcscan.rejected"));
}

#[test]
fn the_layers_own_rejection() {
    let spans =
        spans(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"rm"}}"#, || {
            unreachable!("a denied tool never reaches the upstream")
        });
    let f = &spans[0].fields;
    assert_eq!(f["otel.name"], "tools/call rm");
    assert_eq!(f["rpcscan.rejected"], "tool_not_allowed");
    assert_eq!(f["error.type"], "-32602");
    assert_eq!(f["otel.status_description"], "Invalid params: unknown tool");
}

#[test]
fn a_notification_has_no_id_and_a_clean_status() {
    let spans = spans(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, || {
        Response::builder().status(202).body(Full::new(Bytes::new())).unwrap()
    });
    let f = &spans[0].fields;
    assert_eq!(f["otel.name"], "notifications/initialized");
    assert!(!f.contains_key("jsonrpc.request.id") && !f.contains_key("error.type"), "{f:?}");
}

#[test]
fn server_messages_on_the_stream_are_spans_inside_the_posts() {
    let spans = spans(
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"stream","_meta":{"progressToken":1}}}"#,
        || {
            let events = concat!(
                "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n",
                "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"sampling/createMessage\",\"params\":{}}\n\n",
                "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"content\":[]}}\n\n",
            );
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(Full::new(Bytes::from_static(events.as_bytes())))
                .unwrap()
        },
    );
    let names: Vec<_> =
        spans.iter().map(|s| (s.name.as_str(), s.fields["otel.name"].as_str(), s.parent)).collect();
    assert_eq!(
        names,
        [
            ("mcp.server", "tools/call stream", None),
            ("mcp.client", "notifications/progress", Some(0)),
            ("mcp.client", "sampling/createMessage", Some(0)),
        ]
    );
    assert_eq!(spans[1].fields["otel.kind"], "client");
    assert_eq!(spans[2].fields["jsonrpc.request.id"], "0");
    assert!(!spans[0].fields.contains_key("error.type"), "{:?}", spans[0].fields);
}

#[test]
fn a_stream_that_ends_before_the_response_fails_the_span() {
    let spans = spans(
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"stream"}}"#,
        || {
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(Full::new(Bytes::from_static(b": nothing\n\n")))
                .unwrap()
        },
    );
    assert_eq!(spans[0].fields["error.type"], "_OTHER");
    assert_eq!(spans[0].fields["otel.status_description"], "the stream ended before the response");
}

#[test]
fn the_span_hook_sees_each_span_and_its_message() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let hook_seen = seen.clone();
    let layer = McpLayer::new().on_span(move |span, msg| {
        let method = msg.method().map(|m| m.decode().unwrap().into_owned());
        hook_seen.lock().unwrap().push((span.metadata().map(|m| m.name()), method));
    });
    let spans = spans_with(
        layer,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"stream"}}"#,
        || {
            let events = concat!(
                "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n",
                "data: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"content\":[]}}\n\n",
            );
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(Full::new(Bytes::from_static(events.as_bytes())))
                .unwrap()
        },
    );
    assert_eq!(spans.len(), 2);
    assert_eq!(
        *seen.lock().unwrap(),
        [
            (Some("mcp.server"), Some("tools/call".to_owned())),
            (Some("mcp.client"), Some("notifications/message".to_owned())),
        ]
    );
}
