//! A ready [`Observer`] keeping counters and a latency histogram, rendered in the
//! Prometheus text exposition format (no metrics crate needed).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::sync::{Mutex, MutexGuard, PoisonError};

use rpcscan::Str;

use crate::observe::{Direction, Event, Observer};

/// Upper bounds (seconds) of the latency histogram's buckets.
const BUCKETS: [f64; 12] =
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0];

/// Label value for names past the cardinality cap, and for names that are not text.
const OTHER: &str = "other";

/// Counts what the layer sees and renders it for a `/metrics` endpoint:
///
/// | metric | labels |
/// |---|---|
/// | `rpcscan_messages_total` | `direction`, `kind`, `method` |
/// | `rpcscan_tool_calls_total` | `tool` |
/// | `rpcscan_error_responses_total` | `direction`, `code` |
/// | `rpcscan_rejections_total` | `reason` |
/// | `rpcscan_sse_non_message_events_total` | `direction` |
/// | `rpcscan_response_latency_seconds` (histogram) | `method` |
///
/// Methods and tool names come from clients: only the first [`max_names`](Self::max_names)
/// distinct values (default 100) get a label of their own, later ones count as `other`,
/// so that a client cannot blow up the number of series.
///
/// ```
/// use std::sync::Arc;
/// use rpcscan_tower::{McpLayer, PrometheusObserver};
///
/// let metrics = Arc::new(PrometheusObserver::new());
/// let layer = McpLayer::new().observer(Arc::clone(&metrics));
/// // ... serve; then on GET /metrics:
/// let text = metrics.render();
/// assert!(text.contains("# TYPE rpcscan_messages_total counter"));
/// # drop(layer);
/// ```
#[derive(Debug)]
pub struct PrometheusObserver {
    max_names: usize,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    names: BTreeSet<String>,
    messages: BTreeMap<(&'static str, &'static str, String), u64>,
    tools: BTreeMap<String, u64>,
    errors: BTreeMap<(&'static str, i64), u64>,
    rejections: BTreeMap<&'static str, u64>,
    non_message: BTreeMap<&'static str, u64>,
    latency: BTreeMap<String, Histogram>,
}

#[derive(Debug, Default)]
struct Histogram {
    buckets: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

impl Default for PrometheusObserver {
    fn default() -> Self {
        PrometheusObserver::new()
    }
}

impl PrometheusObserver {
    /// An empty set of metrics.
    pub fn new() -> Self {
        PrometheusObserver { max_names: 100, state: Mutex::new(State::default()) }
    }

    /// How many distinct method and tool names get labels of their own.
    pub fn max_names(mut self, max: usize) -> Self {
        self.max_names = max;
        self
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere while counting leaves counts that are still counts.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The metrics in the Prometheus text format (version 0.0.4).
    pub fn render(&self) -> String {
        let state = self.state();
        let mut out = String::new();
        header(
            &mut out,
            "rpcscan_messages_total",
            "counter",
            "JSON-RPC messages classified by the layer.",
        );
        for ((direction, kind, method), n) in &state.messages {
            let _ = writeln!(
                out,
                "rpcscan_messages_total{{direction=\"{direction}\",kind=\"{kind}\",method=\"{}\"}} {n}",
                escape(method)
            );
        }
        header(
            &mut out,
            "rpcscan_tool_calls_total",
            "counter",
            "tools/call requests from clients, by tool.",
        );
        for (tool, n) in &state.tools {
            let _ = writeln!(out, "rpcscan_tool_calls_total{{tool=\"{}\"}} {n}", escape(tool));
        }
        header(
            &mut out,
            "rpcscan_error_responses_total",
            "counter",
            "JSON-RPC error responses, by code.",
        );
        for ((direction, code), n) in &state.errors {
            let _ = writeln!(
                out,
                "rpcscan_error_responses_total{{direction=\"{direction}\",code=\"{code}\"}} {n}"
            );
        }
        header(
            &mut out,
            "rpcscan_rejections_total",
            "counter",
            "Messages the layer answered itself instead of passing on.",
        );
        for (reason, n) in &state.rejections {
            let _ = writeln!(out, "rpcscan_rejections_total{{reason=\"{reason}\"}} {n}");
        }
        header(
            &mut out,
            "rpcscan_sse_non_message_events_total",
            "counter",
            "SSE events of another type than message, passed on unclassified.",
        );
        for (direction, n) in &state.non_message {
            let _ = writeln!(
                out,
                "rpcscan_sse_non_message_events_total{{direction=\"{direction}\"}} {n}"
            );
        }
        header(
            &mut out,
            "rpcscan_response_latency_seconds",
            "histogram",
            "Time from the request's head to each server message answering it.",
        );
        for (method, h) in &state.latency {
            let method = escape(method);
            let mut cumulative = 0;
            for (le, n) in BUCKETS.iter().zip(h.buckets) {
                cumulative += n;
                let _ = writeln!(
                    out,
                    "rpcscan_response_latency_seconds_bucket{{method=\"{method}\",le=\"{le}\"}} {cumulative}"
                );
            }
            let _ = writeln!(
                out,
                "rpcscan_response_latency_seconds_bucket{{method=\"{method}\",le=\"+Inf\"}} {}",
                h.count
            );
            let _ = writeln!(
                out,
                "rpcscan_response_latency_seconds_sum{{method=\"{method}\"}} {}",
                h.sum
            );
            let _ = writeln!(
                out,
                "rpcscan_response_latency_seconds_count{{method=\"{method}\"}} {}",
                h.count
            );
        }
        out
    }
}

impl State {
    /// The label for a client-chosen name, within the cardinality cap.
    fn label(&mut self, name: Option<Str<'_>>, max: usize) -> String {
        let Some(Ok(name)) = name.map(|n| n.decode()) else {
            return if name.is_none() { String::new() } else { OTHER.to_owned() };
        };
        if self.names.contains(name.as_ref()) {
            return name.into_owned();
        }
        if self.names.len() >= max {
            return OTHER.to_owned();
        }
        self.names.insert(name.clone().into_owned());
        name.into_owned()
    }
}

impl Observer for PrometheusObserver {
    fn message(&self, event: &Event<'_>) {
        let mut state = self.state();
        let direction = event.direction.as_str();
        let method = state.label(event.method, self.max_names);
        if let Some(reason) = event.rejected {
            *state.rejections.entry(reason.as_str()).or_default() += 1;
        }
        if event.kind == rpcscan::Kind::Error {
            if let Some(code) = event.error_code {
                *state.errors.entry((direction, code)).or_default() += 1;
            }
        }
        if event.direction == Direction::ClientToServer && event.kind == rpcscan::Kind::Request {
            if let Some(tool) = event.tool {
                let tool = state.label(Some(tool), self.max_names);
                *state.tools.entry(tool).or_default() += 1;
            }
        }
        if let (Some(latency), true) = (event.latency, event.kind.is_response()) {
            let seconds = latency.as_secs_f64();
            let h = state.latency.entry(method.clone()).or_default();
            if let Some(i) = BUCKETS.iter().position(|&le| seconds <= le) {
                h.buckets[i] += 1;
            }
            h.count += 1;
            h.sum += seconds;
        }
        *state.messages.entry((direction, event.kind.as_str(), method)).or_default() += 1;
    }

    fn non_message_event(&self, direction: Direction, _: Option<&str>, _: &str) {
        *self.state().non_message.entry(direction.as_str()).or_default() += 1;
    }
}

fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

/// A label value with `\`, `"` and line feeds escaped, as the text format requires.
fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}
