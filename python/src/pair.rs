//! `pair`: every response matched to the request it answers, by the engine's pairing
//! (`rpcscan_traffic::pair::Pairs`, over the library's matcher: the rules live there), into
//! an Arrow table with the members of `rpcscan pair --json`, and the summary as a `dict`.
//! This file is the output only: the columns and the summary.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, UInt64Array};
use arrow_schema::{DataType, Field, Schema};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use rpcscan::pair::{Ending, Event, Outcome, Position, Seen, Stat, Summary};
use rpcscan_traffic::pair::{self as engine, Pairs, Report};

use crate::scan::{dictionary, Strings, Table};

/// The pair command: the engine's pairing, reporting into Arrow columns.
pub(crate) type Pair = Pairs<Columns>;

/// The report: each settled event becomes a row of [`Events`].
pub(crate) struct Columns;

impl Report for Columns {
    type Out = Events;

    fn event(&self, event: &Event<'_>, out: &mut Events) {
        out.push(event);
    }
}

/// The engine's tally for this command.
pub(crate) type Tally = engine::PairTally<Events>;

/// `event` values, in the dictionary's order.
const EVENTS: [&str; 8] = [
    "pair",
    "orphan",
    "null_id_error",
    "duplicate",
    "unanswered",
    "cancelled",
    "stray_progress",
    "stray_cancel",
];
const OUTCOMES: [&str; 2] = ["result", "error"];
const ENDINGS: [&str; 3] = ["finished", "evicted", "timed_out"];

/// The event columns, appended to in the order the events settle.
#[derive(Default)]
pub(crate) struct Events {
    event: Vec<Option<i8>>,
    request_line: Vec<Option<u64>>,
    request_offset: Vec<Option<u64>>,
    response_line: Vec<Option<u64>>,
    response_offset: Vec<Option<u64>>,
    id: Strings,
    method: Strings,
    tool: Strings,
    outcome: Vec<Option<i8>>,
    error_code: Vec<Option<i64>>,
    error_code_text: Strings,
    latency_ms: Vec<Option<f64>>,
    progress: Vec<u64>,
    cancelled: Vec<bool>,
    ending: Vec<Option<i8>>,
    earlier_line: Vec<Option<u64>>,
    earlier_offset: Vec<Option<u64>>,
}

/// A line number as `pair --json` prints it: null where the framing has none.
fn line(at: Option<Position>) -> Option<u64> {
    at.map(|at| at.line).filter(|&l| l > 0)
}

/// A raw integer literal as an `i64`, when it is one and fits.
fn code(raw: &[u8]) -> Option<i64> {
    std::str::from_utf8(raw).ok()?.parse().ok()
}

impl Events {
    /// One row per event, with the members (and nulls) of `rpcscan pair --json`.
    fn push(&mut self, event: &Event<'_>) {
        let mut request = None;
        let mut response = None;
        let mut at = None;
        let mut id: Option<&[u8]> = None;
        let mut method: Option<&str> = None;
        let mut latency = None;
        let mut ending = None;
        let mut earlier = None;
        let name = match event {
            Event::Paired { request: r, response: s, latency: l } => {
                request = Some(r);
                response = Some(s);
                latency = *l;
                0
            }
            Event::Orphan(s) => {
                response = Some(s);
                1
            }
            Event::NullIdError(s) => {
                response = Some(s);
                2
            }
            Event::Duplicate { id: i, method: m, at: a, earlier: e, .. } => {
                id = Some(i);
                method = Some(m);
                at = Some(*a);
                earlier = Some(*e);
                3
            }
            Event::Unanswered { request: r, ending: e } => {
                request = Some(r);
                ending = Some(*e);
                4
            }
            Event::Cancelled { request: r, ending: e } => {
                request = Some(r);
                ending = Some(*e);
                5
            }
            Event::StrayProgress(a) => {
                at = Some(*a);
                6
            }
            Event::StrayCancel(a) => {
                at = Some(*a);
                7
            }
        };
        let at = at.or(request.map(|r| r.at));
        let response_at = response.map(|s| s.at);
        self.event.push(Some(name));
        self.request_line.push(line(at));
        self.request_offset.push(at.map(|a| a.offset));
        self.response_line.push(line(response_at));
        self.response_offset.push(response_at.map(|a| a.offset));
        let id = id.or(request.map(|r| &r.id[..])).or(response.and_then(|s| s.id));
        self.id.push(id);
        let method = method.or(request.map(|r| &*r.method));
        self.method.push(method.map(str::as_bytes));
        self.tool.push(event.tool().map(str::as_bytes));
        let (outcome, code_text) = match response.map(|s| s.outcome) {
            Some(Outcome::Result) => (Some(0), None),
            Some(Outcome::Error(c)) => (Some(1), c),
            None => (None, None),
        };
        self.outcome.push(outcome);
        self.error_code.push(code_text.and_then(code));
        self.error_code_text.push(code_text);
        self.latency_ms.push(latency.map(|l| l.as_secs_f64() * 1000.0));
        self.progress.push(request.map_or(0, |r| r.progress));
        self.cancelled.push(request.is_some_and(|r| r.cancelled));
        self.ending.push(ending.map(|e| match e {
            Ending::Finished => 0,
            Ending::Evicted => 1,
            Ending::TimedOut => 2,
        }));
        self.earlier_line.push(line(earlier));
        self.earlier_offset.push(earlier.map(|e| e.offset));
    }

    fn into_batch(self) -> Result<RecordBatch, arrow_schema::ArrowError> {
        let dict = DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8));
        let schema = Schema::new(vec![
            Field::new("event", dict.clone(), false),
            Field::new("request_line", DataType::UInt64, true),
            Field::new("request_offset", DataType::UInt64, true),
            Field::new("response_line", DataType::UInt64, true),
            Field::new("response_offset", DataType::UInt64, true),
            Field::new("id", DataType::LargeUtf8, true),
            Field::new("method", DataType::LargeUtf8, true),
            Field::new("tool", DataType::LargeUtf8, true),
            Field::new("outcome", dict.clone(), true),
            Field::new("error_code", DataType::Int64, true),
            Field::new("error_code_text", DataType::LargeUtf8, true),
            Field::new("latency_ms", DataType::Float64, true),
            Field::new("progress", DataType::UInt64, false),
            Field::new("cancelled", DataType::Boolean, false),
            Field::new("ending", dict, true),
            Field::new("earlier_line", DataType::UInt64, true),
            Field::new("earlier_offset", DataType::UInt64, true),
        ]);
        let u64s = |v: Vec<Option<u64>>| -> ArrayRef { Arc::new(UInt64Array::from(v)) };
        let columns: Vec<ArrayRef> = vec![
            dictionary(self.event, &EVENTS)?,
            u64s(self.request_line),
            u64s(self.request_offset),
            u64s(self.response_line),
            u64s(self.response_offset),
            self.id.into_array()?,
            self.method.into_array()?,
            self.tool.into_array()?,
            dictionary(self.outcome, &OUTCOMES)?,
            Arc::new(Int64Array::from(self.error_code)),
            self.error_code_text.into_array()?,
            Arc::new(Float64Array::from(self.latency_ms)),
            Arc::new(UInt64Array::from(self.progress)),
            Arc::new(BooleanArray::from(self.cancelled)),
            dictionary(self.ending, &ENDINGS)?,
            u64s(self.earlier_line),
            u64s(self.earlier_offset),
        ];
        RecordBatch::try_new(Arc::new(schema), columns)
    }
}

/// Ends the run: the matcher emptied, the table and the summary.
pub(crate) fn finish(cmd: &Pair, tally: Tally) -> PyResult<Finished> {
    let finished = cmd.finish(tally).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    Ok(Finished {
        labels: finished.directions.labels().map(|l| l.map(<[u8]>::to_vec)),
        events: finished.out,
        summary: finished.summary,
        undirected: finished.directions.undirected(),
    })
}

/// A finished run: the events and what the summary needs.
pub(crate) struct Finished {
    events: Events,
    summary: Summary,
    labels: [Option<Vec<u8>>; 2],
    undirected: u64,
}

impl Finished {
    /// The event table and the summary `dict`.
    pub(crate) fn into_python(self, py: Python<'_>) -> PyResult<(Table, Py<PyDict>)> {
        let summary = summary_dict(py, &self.summary, &self.labels, self.undirected)?;
        let batch = self.events.into_batch().map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        Ok((Table::new(batch), summary.unbind()))
    }
}

/// Milliseconds, as `pair --json` prints latencies.
fn millis(d: Option<Duration>) -> Option<f64> {
    d.map(|d| d.as_secs_f64() * 1000.0)
}

fn lossy(bytes: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

/// `{"count", "errors": {code: n}, "p50_ms", "p90_ms", "p99_ms", "max_ms"}` per name.
fn stats<'py>(py: Python<'py>, rows: &rpcscan::pair::Named<Stat>) -> PyResult<Bound<'py, PyDict>> {
    let all = PyDict::new(py);
    for (name, stat) in rows {
        let one = PyDict::new(py);
        one.set_item("count", stat.count)?;
        let errors = PyDict::new(py);
        for (code, n) in &stat.errors {
            errors.set_item(lossy(code), n)?;
        }
        one.set_item("errors", errors)?;
        let l = &stat.latency;
        one.set_item("p50_ms", millis(l.percentile(50.0)))?;
        one.set_item("p90_ms", millis(l.percentile(90.0)))?;
        one.set_item("p99_ms", millis(l.percentile(99.0)))?;
        one.set_item("max_ms", millis((l.count() > 0).then(|| l.max())))?;
        all.set_item(name, one)?;
    }
    Ok(all)
}

fn first_lines<'py>(py: Python<'py>, seen: &Seen) -> PyResult<Bound<'py, PyList>> {
    PyList::new(py, &seen.first_lines)
}

/// The summary: the members of the closing `pair --json` line, then per method, per tool
/// and per unanswered method, and the first lines of each anomaly.
fn summary_dict<'py>(
    py: Python<'py>,
    s: &Summary,
    labels: &[Option<Vec<u8>>; 2],
    undirected: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("pairs", s.pairs)?;
    d.set_item("unanswered", s.unanswered_count())?;
    d.set_item("evicted", s.evicted)?;
    d.set_item("timed_out", s.timed_out)?;
    d.set_item("orphans", s.orphans.count)?;
    d.set_item("duplicates", s.duplicates.count)?;
    d.set_item("cancelled", s.cancelled.count)?;
    d.set_item("null_id_errors", s.null_id_errors.count)?;
    d.set_item("stray_notifications", s.stray_notifications.count)?;
    let directions = match labels {
        [None, _] => None,
        [Some(a), b] => {
            Some(std::iter::once(a).chain(b).map(|l| lossy(l).into_owned()).collect::<Vec<_>>())
        }
    };
    d.set_item("directions", directions)?;
    d.set_item("undirected", undirected)?;
    d.set_item("methods", stats(py, &s.methods)?)?;
    d.set_item("tools", stats(py, &s.tools)?)?;
    let unanswered = PyDict::new(py);
    for (method, seen) in &s.unanswered {
        let one = PyDict::new(py);
        one.set_item("count", seen.count)?;
        one.set_item("first_lines", first_lines(py, seen)?)?;
        unanswered.set_item(method, one)?;
    }
    d.set_item("unanswered_methods", unanswered)?;
    let first = PyDict::new(py);
    for (name, seen) in [
        ("orphans", &s.orphans),
        ("duplicates", &s.duplicates),
        ("cancelled", &s.cancelled),
        ("null_id_errors", &s.null_id_errors),
        ("stray_notifications", &s.stray_notifications),
    ] {
        first.set_item(name, first_lines(py, seen)?)?;
    }
    d.set_item("first_lines", first)?;
    Ok(d)
}

/// `timeout` in seconds (a `float`) as a duration; `ValueError` when negative or not finite.
pub(crate) fn timeout(seconds: Option<f64>) -> PyResult<Option<Duration>> {
    seconds
        .map(|s| {
            Duration::try_from_secs_f64(s).map_err(|_| {
                PyValueError::new_err(format!(
                    "timeout must be a non-negative number of seconds, not {s}"
                ))
            })
        })
        .transpose()
}
