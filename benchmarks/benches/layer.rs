//! The CPU cost of the layers alone: `rpcscan_tower::McpLayer` against the serde_json
//! `Value` layer of the gateway benchmark (`rpcscan_benchmarks::serde_layer`), each around
//! a no-op inner service (tower's `service_fn`), on a 1 KB `tools/call` with its
//! `Mcp-Method` / `Mcp-Name` headers, both configured to refuse tools named `exec…`.
//!
//! * `request path`: the inner service answers without a `Content-Type`, which both layers
//!   pass on untouched, so only the request's checks are timed.
//! * `round trip`: the inner service answers the 1 KB `application/json` response, which
//!   both layers read and check to answer the request's id.
//!
//! `none` is the harness alone (the request built, the inner service called, the answer's
//! body read): a layer's own cost is its time minus `none`'s. `rpcscan` is the layer as
//! `rpcscan gateway` configures it (request timeout on); `rpcscan, no timeouts` leaves the
//! timer out, as the serde layer has none. Every contender's answer is checked before it
//! is timed, and both layers must refuse an `exec…` tool.
//!
//! ```text
//! cargo bench -p rpcscan-benchmarks --bench layer
//! # instructions per call of one contender (the difference of two runs, over 1000):
//! RPCSCAN_LAYER_ONLY='layer 1 KB round trip/rpcscan' RPCSCAN_LAYER_CALLS=1000 \
//!   valgrind --tool=callgrind target/release/deps/layer-HASH --bench
//! ```

use std::convert::Infallible;
use std::hint::black_box;

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use http::header::CONTENT_TYPE;
use http::{HeaderValue, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt, Either, Full};
use rpcscan::response::INVALID_PARAMS;
use rpcscan_benchmarks::mcp_1k;
use rpcscan_benchmarks::serde_layer::SerdeLayer;
use rpcscan_tower::{policy_fn, BoxError, Decision, Denial, McpLayer, RequestBody};
use tokio::runtime::Runtime;
use tower::util::BoxCloneSyncService;
use tower::{service_fn, Layer, Service, ServiceExt};

type In = Full<Bytes>;
type Answer = Response<Full<Bytes>>;
/// Every contender, boxed the same way (one allocation per call each).
type Contender = BoxCloneSyncService<Request<In>, Response<Bytes>, Infallible>;

/// The no-op inner service: drops the request, answers `answer` (with a JSON content type
/// when `json`).
fn inner(
    answer: Bytes,
    json: bool,
) -> impl tower::Service<
    Request<RequestBody<In>>,
    Response = Answer,
    Error = Infallible,
    Future = impl Send + 'static,
> + Clone
       + Send
       + Sync
       + 'static {
    service_fn(move |request: Request<RequestBody<In>>| {
        drop(request);
        let mut response = Response::new(Full::new(answer.clone()));
        if json {
            response
                .headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        }
        async move { Ok::<_, Infallible>(response) }
    })
}

/// `service`, with its answer's body read whole: what a server does with it.
fn collected<S, B>(service: S) -> Contender
where
    S: Service<Request<In>, Response = Response<B>, Error = Infallible>
        + Clone
        + Send
        + Sync
        + 'static,
    S::Future: Send + 'static,
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    BoxCloneSyncService::new(service.and_then(|response: Response<B>| async move {
        let (parts, body) = response.into_parts();
        let bytes = body.collect().await.map_or_else(|_| Bytes::new(), |c| c.to_bytes());
        Ok(Response::from_parts(parts, bytes))
    }))
}

fn request(body: &Bytes) -> Request<In> {
    let mut request = Request::post("/mcp").body(Full::new(body.clone())).expect("a request");
    for (name, value) in mcp_1k::HEADERS {
        request.headers_mut().insert(name, HeaderValue::from_static(value));
    }
    request
}

fn call(rt: &Runtime, service: &Contender, body: &Bytes) -> Response<Bytes> {
    rt.block_on(service.clone().oneshot(request(body))).unwrap_or_else(|never| match never {})
}

fn rpcscan_layer(timeouts: bool) -> McpLayer {
    let layer = McpLayer::new().policy(policy_fn(|msg, mcp| {
        let denied = msg.method().is_some_and(|m| m == "tools/call")
            && mcp.tool_name().is_none_or(|t| t.decode().is_ok_and(|t| t.starts_with("exec")));
        if denied {
            Decision::Deny(Denial::new(INVALID_PARAMS, "Unknown tool"))
        } else {
            Decision::Forward
        }
    }));
    if timeouts {
        layer
    } else {
        layer.request_timeout(None).idle_timeout(None)
    }
}

fn contenders(answer: &Bytes, json: bool) -> Vec<(&'static str, Contender)> {
    let none = inner(answer.clone(), json).map_request(|r: Request<In>| r.map(Either::Right));
    vec![
        ("none", collected(none)),
        ("rpcscan", collected(rpcscan_layer(true).layer(inner(answer.clone(), json)))),
        (
            "rpcscan, no timeouts",
            collected(rpcscan_layer(false).layer(inner(answer.clone(), json))),
        ),
        ("serde_json Value", collected(SerdeLayer::new("exec").layer(inner(answer.clone(), json)))),
    ]
}

fn layers(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().expect("runtime");
    let body = Bytes::from(mcp_1k::request());
    let answer = Bytes::from(mcp_1k::answer());
    let denied = Bytes::from(mcp_1k::request().replacen("\"search\"", "\"exec_1\"", 1));
    for (group, json) in [("layer 1 KB request path", false), ("layer 1 KB round trip", true)] {
        let contenders = contenders(&answer, json);
        // Every contender answers with the upstream's bytes; the layers refuse `exec…`.
        for (name, service) in &contenders {
            let response = call(&rt, service, &body);
            assert_eq!(response.status(), StatusCode::OK, "{group}: {name}");
            assert_eq!(response.body(), &answer, "{group}: {name}");
            if *name != "none" {
                let mut request = request(&denied);
                request.headers_mut().insert("mcp-name", HeaderValue::from_static("exec_1"));
                let response = rt
                    .block_on(service.clone().oneshot(request))
                    .unwrap_or_else(|never| match never {});
                let text = String::from_utf8_lossy(response.body()).into_owned();
                assert!(text.contains("-32602"), "{group}: {name} let exec_1 through: {text}");
            }
        }
        // `RPCSCAN_LAYER_CALLS=N RPCSCAN_LAYER_ONLY='GROUP/NAME'`: N calls of one contender
        // and no timing, for instruction counts (callgrind at two N; the difference over
        // the difference of N is per call, the set-up cancels out).
        if let (Ok(calls), Ok(only)) =
            (std::env::var("RPCSCAN_LAYER_CALLS"), std::env::var("RPCSCAN_LAYER_ONLY"))
        {
            let calls: usize = calls.parse().expect("RPCSCAN_LAYER_CALLS: a number");
            for (name, service) in &contenders {
                if only == format!("{group}/{name}") {
                    for _ in 0..calls {
                        black_box(call(&rt, service, black_box(&body)));
                    }
                }
            }
            continue;
        }
        let mut g = c.benchmark_group(group);
        g.throughput(Throughput::Elements(1));
        for (name, service) in &contenders {
            g.bench_function(*name, |b| b.iter(|| black_box(call(&rt, service, black_box(&body)))));
        }
        g.finish();
    }
}

criterion_group!(benches, layers);
criterion_main!(benches);
