//! `rpcscan gateway --otlp-endpoint URL`: the spans `rpcscan_tower` opens for every MCP
//! message (docs/tower.md lists them and their attributes) exported as OTLP/HTTP protobuf
//! to an OpenTelemetry collector, batched by the SDK on the gateway's tokio runtime. Only
//! the layer's spans are exported (`tracing` target `rpcscan_tower`).

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, SpanExporter, WithExportConfig};
use opentelemetry_sdk::runtime::Tokio;
use opentelemetry_sdk::trace::span_processor_with_async_runtime::BatchSpanProcessor;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use tracing::Level;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::Layer as _;

/// The exporter, installed as the global `tracing` subscriber: dropping it exports the
/// spans still waiting.
pub struct Otlp(SdkTracerProvider);

/// Installs the exporter when `endpoint` is given (the collector's traces URL, used as
/// given: `http://HOST:4318/v1/traces`). Call it inside the gateway's multi-thread runtime,
/// and keep what it returns until the gateway stops.
pub fn install(endpoint: Option<&str>) -> Result<Option<Otlp>, String> {
    endpoint.map(exporter).transpose()
}

fn exporter(endpoint: &str) -> Result<Otlp, String> {
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
