//! `rpcscan gateway --otlp-endpoint URL`: the spans `rpcscan_tower` opens for every MCP
//! message (docs/tower.md lists them and their attributes) exported as OTLP/HTTP protobuf
//! to an OpenTelemetry collector, batched by the SDK on the gateway's tokio runtime. Only
//! the layer's spans are exported (`tracing` target `rpcscan_tower`). A message carrying a
//! W3C trace context in `params._meta` (`traceparent`, `tracestate`) gets it as its span's
//! remote parent, as the OpenTelemetry MCP conventions ask.

use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::{TraceContextExt as _, TracerProvider as _};
use opentelemetry_otlp::{Protocol, SpanExporter, WithExportConfig};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::runtime::Tokio;
use opentelemetry_sdk::trace::span_processor_with_async_runtime::BatchSpanProcessor;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use rpcscan::Message;
use rpcscan_tower::McpLayer;
use tracing::Level;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::Layer as _;

/// The exporter, installed as the global `tracing` subscriber: dropping it exports the
/// spans still waiting.
pub struct Otlp(SdkTracerProvider);

/// `layer`, giving each span its parent from the message's `params._meta` (`traceparent`,
/// `tracestate`: the W3C trace context MCP clients put there).
pub fn traced(layer: McpLayer) -> McpLayer {
    layer.on_span(parent_from_meta)
}

fn parent_from_meta(span: &tracing::Span, msg: &Message<'_>) {
    let Some(meta) = msg.params_meta().unique() else { return };
    let [parent, state] = meta.get_many(["traceparent", "tracestate"]);
    let Some(parent) = parent.as_str().and_then(|s| s.decode().ok()) else { return };
    let state = state.as_str().and_then(|s| s.decode().ok());
    let carrier = Meta { traceparent: &parent, tracestate: state.as_deref() };
    let context = TraceContextPropagator::new().extract(&carrier);
    if context.span().span_context().is_valid() {
        // Fails only for a span no OpenTelemetry layer records.
        let _ = span.set_parent(context);
    }
}

/// The two `_meta` members a W3C propagator reads.
struct Meta<'a> {
    traceparent: &'a str,
    tracestate: Option<&'a str>,
}

impl Extractor for Meta<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            "traceparent" => Some(self.traceparent),
            "tracestate" => self.tracestate,
            _ => None,
        }
    }

    fn keys(&self) -> Vec<&str> {
        vec!["traceparent", "tracestate"]
    }
}

/// Installs the exporter of the spans (the collector's traces URL, used as given:
/// `http://HOST:4318/v1/traces`) as the global `tracing` subscriber. Call it inside the
/// gateway's multi-thread runtime, and keep the `Otlp` until the gateway stops.
pub fn exporter(endpoint: &str) -> Result<Otlp, String> {
    let uri: http::Uri = endpoint.parse().map_err(|e| format!("{endpoint}: {e}"))?;
    if uri.scheme_str() != Some("http") {
        return Err(format!("{endpoint}: only http:// endpoints are supported"));
    }
    let exporter = SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(endpoint)
        .build()
        .map_err(|e| e.to_string())?;
    let resource = Resource::builder().with_service_name("rpcscan-gateway").build();
    let provider = SdkTracerProvider::builder()
        .with_span_processor(BatchSpanProcessor::builder(exporter, Tokio).build())
        .with_resource(resource)
        .build();
    let tracer = provider.tracer("rpcscan-gateway");
    let only_messages = Targets::new().with_target(rpcscan_tower::TRACING_TARGET, Level::INFO);
    let layer = tracing_opentelemetry::layer().with_tracer(tracer).with_filter(only_messages);
    let subscriber = tracing_subscriber::registry().with(layer);
    tracing::subscriber::set_global_default(subscriber).map_err(|e| e.to_string())?;
    Ok(Otlp(provider))
}

impl Drop for Otlp {
    fn drop(&mut self) {
        // The batch processor is a task of this runtime: let it run while this thread
        // waits for the last export.
        let flush = || self.0.shutdown();
        let multi_thread = tokio::runtime::Handle::try_current()
            .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
        let result = if multi_thread { tokio::task::block_in_place(flush) } else { flush() };
        if let Err(e) = result {
            eprintln!("rpcscan gateway: --otlp-endpoint: {e}");
        }
    }
}
