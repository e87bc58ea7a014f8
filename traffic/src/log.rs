//! `rpcscan proxy --log FILE` and `rpcscan gateway --log FILE`: every message of both
//! directions, every answer either side got, and every decision the proxy (or gateway)
//! takes itself, as one JSON object per line.
//!
//! ```text
//! {"ts":"2026-12-01T15:24:31.123456Z","dir":"c2s","msg":{"jsonrpc":"2.0","id":"a","method":"tools/list"}}
//! {"ts":"2026-12-01T15:24:31.124012Z","dir":"s2c","msg":{"jsonrpc":"2.0","id":"a","result":{"tools":[]}}}
//! {"ts":"2026-12-01T15:24:31.130000Z","dir":"c2s","msg":{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"exec"}}}
//! {"ts":"2026-12-01T15:24:31.130001Z","dir":"proxy","event":"denied","from":"client","id":7,"reason":"tool \"exec\" not allowed","msg":{"jsonrpc": "2.0", "id": 7, "error": {...}}}
//! {"ts":"2026-12-01T15:24:31.130002Z","dir":"s2c","origin":"proxy","msg":{"jsonrpc": "2.0", "id": 7, "error": {...}}}
//! ```
//!
//! * `ts`: RFC 3339, UTC, microseconds.
//! * `dir`: `c2s`, a message as the client sent it (before the id is rewritten), whether
//!   it was forwarded or refused; `s2c`, a message as the client receives it (its id
//!   restored), whoever wrote it, so a request and its response carry the same id; `proxy`,
//!   a decision of the proxy's own. An answer the proxy gives the server for the client (to
//!   a server request the client's response to was too large) is `c2s`, as the server
//!   receives it. So every answer either side got is a `c2s` or `s2c` record, and `rpcscan
//!   pair` (which reads those two and skips `proxy` records) pairs it.
//! * `msg`: the message's bytes, embedded verbatim (never re-encoded: ids above 2^53, `-0`
//!   and escapes are as on the wire). A client message the proxy could not read (invalid:
//!   not JSON, or not JSON-RPC) is a JSON string holding its line; one that is not UTF-8
//!   has no `c2s` record (a string could only hold it changed), nor has a message over
//!   `--max-message-size` (it was never kept): their answers pair with no request, an
//!   orphan or a null-id error in `pair`'s terms. For a `proxy` record, the answer the proxy
//!   sent (or the message it dropped), when there is one.
//! * `origin` (on `c2s` and `s2c`): who wrote the message when neither side did: `proxy`
//!   (`rpcscan proxy`'s answers: `denied`, `invalid`, `oversized`, `overloaded`,
//!   `server_gone`) or `gateway` (`rpcscan gateway`'s answers: its rejections, and its 502
//!   and 504 for an upstream that did not answer). Each follows the `proxy` record of its
//!   decision.
//! * `status` (`rpcscan gateway`, on `s2c`): the HTTP status the message came with, when it
//!   was not 2xx: an upstream's error answer (`400` for a session that ended), or the
//!   gateway's own.
//! * `request_id` (`rpcscan gateway`, on such `s2c` answers): the raw id of the POST's
//!   request the answer answers. HTTP binds an answer to its request whatever the id in
//!   its body says (`null`, often, on an error status); `pair` matches the answer by it.
//! * `proxy` records also have `event` (`denied`, `invalid`, `oversized`, `cancelled`,
//!   `dropped`, `overloaded`, `server_gone`, `signal`, `kill`, `server_exit`), `from` (`client` or
//!   `server`, when the event is about a message), and may have `id` (raw, verbatim),
//!   `reason` (a string), `raw` (an invalid message as a JSON string, at most 1 KiB of it,
//!   invalid UTF-8 replaced), `size` and `code`. A cancelled request gets no answer (MCP):
//!   its `cancelled` record has none, and `pair` reports it cancelled, not unanswered.
//! * `rpcscan gateway` records may also have `session`: the exchange's `Mcp-Session-Id`
//!   (one gateway carries many sessions). Its `proxy` events are the layer's rejections
//!   (`invalid`, `oversized`, `denied`, `header_mismatch`, `duplicate_routing_key`,
//!   `timeout`, `origin`, `upstream_mismatch`, `upstream_unreachable`, ...) and
//!   `non_message` (an SSE event of another type than `message`, its type in `reason`).
//!
//! Answers of the gateway's own (the request's `c2s` record and the `proxy` record of the
//! decision come before them), then an upstream's error answer:
//!
//! ```text
//! {"ts":"...","dir":"s2c","origin":"gateway","msg":{"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Unknown tool"}}}
//! {"ts":"...","dir":"s2c","origin":"gateway","status":413,"msg":{"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "Invalid Request: body too large"}}}
//! {"ts":"...","dir":"s2c","origin":"gateway","status":504,"request_id":6,"msg":{"jsonrpc": "2.0", "id": 6, "error": {"code": -32603, "message": "Gateway Timeout: no answer from upstream"}}}
//! {"ts":"...","dir":"s2c","status":400,"request_id":9,"session":"s1","msg":{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}}
//! ```

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rpcscan::response::write_json_string;

/// How much of an invalid message a record keeps.
const RAW_KEPT: usize = 1024;

/// The writer takes the buffer once it holds this much ...
const FLUSH_SIZE: usize = 64 * 1024;
/// ... or this long after the first record put in it, whichever comes first.
const FLUSH_AFTER: Duration = Duration::from_millis(100);

/// Where records go: a buffer the callers append to (formatted in place, one lock per
/// record, no allocation once the buffers have grown), written to the file by a thread of
/// its own when it holds 64 KiB or 100 ms after its first record, whichever comes first, so
/// the callers never wait on the file; or nowhere.
#[derive(Clone)]
pub struct Log {
    shared: Option<Arc<Shared>>,
}

struct Shared {
    state: Mutex<State>,
    /// The writer waits on this; an append wakes it only when it waits for what the append
    /// brings (a first record, or a full buffer).
    wake: Condvar,
}

struct State {
    /// The records not written yet.
    buf: Vec<u8>,
    /// A buffer the writer has written and handed back (emptied, capacity kept).
    spare: Vec<u8>,
    waiting: Waiting,
    stop: bool,
    /// The timestamp's second last written, and its text (`2026-12-01T15:24:31`).
    second: u64,
    second_text: [u8; 19],
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Waiting {
    /// The writer is writing, or will look again before it waits.
    No,
    /// The writer waits for a first record.
    Records,
    /// The writer waits for the buffer to reach [`FLUSH_SIZE`] (or for its time).
    Full,
}

/// Joins the writer thread on [`Writer::finish`].
pub struct Writer {
    shared: Option<Arc<Shared>>,
    thread: Option<JoinHandle<()>>,
}

impl Writer {
    /// Writes what is buffered, and stops the thread.
    pub fn finish(mut self) {
        if let Some(shared) = self.shared.take() {
            shared.lock().stop = true;
            shared.wake.notify_one();
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while a record was being appended leaves at worst a partial line.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Opens (creates or truncates) the log file; `None` logs nothing.
pub fn open(path: Option<&Path>) -> io::Result<(Log, Writer)> {
    let Some(path) = path else {
        return Ok((Log { shared: None }, Writer { shared: None, thread: None }));
    };
    let file = File::create(path)?;
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            buf: Vec::with_capacity(2 * FLUSH_SIZE),
            spare: Vec::with_capacity(2 * FLUSH_SIZE),
            waiting: Waiting::No,
            stop: false,
            second: u64::MAX,
            second_text: [0; 19],
        }),
        wake: Condvar::new(),
    });
    let writer = Arc::clone(&shared);
    let thread = std::thread::Builder::new()
        .name("rpcscan-log".into())
        .spawn(move || write_loop(&writer, file))?;
    Ok((
        Log { shared: Some(Arc::clone(&shared)) },
        Writer { shared: Some(shared), thread: Some(thread) },
    ))
}

fn write_loop(shared: &Shared, mut file: File) {
    let mut failed = false;
    let mut state = shared.lock();
    loop {
        while state.buf.is_empty() && !state.stop {
            state.waiting = Waiting::Records;
            state = shared.wake.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        // Gather more records into one write, for a while.
        let deadline = Instant::now() + FLUSH_AFTER;
        while state.buf.len() < FLUSH_SIZE && !state.stop {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else { break };
            if left.is_zero() {
                break;
            }
            state.waiting = Waiting::Full;
            state = shared.wake.wait_timeout(state, left).unwrap_or_else(|e| e.into_inner()).0;
        }
        state.waiting = Waiting::No;
        let stop = state.stop;
        let spare = std::mem::take(&mut state.spare);
        let mut records = std::mem::replace(&mut state.buf, spare);
        drop(state);
        if !failed && !records.is_empty() {
            if let Err(e) = file.write_all(&records) {
                eprintln!("rpcscan: --log: {e}");
                failed = true;
            }
        }
        records.clear();
        if records.capacity() > 16 * FLUSH_SIZE {
            // One huge message grew it: keep the usual size.
            records = Vec::with_capacity(2 * FLUSH_SIZE);
        }
        state = shared.lock();
        state.spare = records;
        if stop && state.buf.is_empty() {
            break;
        }
    }
    drop(state);
    let _ = file.flush();
}

/// A `proxy` record under construction.
pub struct Event<'a> {
    /// What happened: `denied`, `invalid`, `oversized`, ... (the module docs list them).
    pub event: &'a str,
    /// `client` or `server`: whose message the event is about.
    pub from: Option<&'a str>,
    /// The message's raw id, verbatim.
    pub id: Option<&'a [u8]>,
    /// Why, for a person.
    pub reason: Option<&'a str>,
    /// An invalid message's bytes (at most 1 KiB of them are kept, as a JSON string).
    pub raw: Option<&'a [u8]>,
    /// A size in bytes (an oversized message's).
    pub size: Option<u64>,
    /// A JSON-RPC error code the proxy answered with, or an exit code.
    pub code: Option<i64>,
    /// The `Mcp-Session-Id` of the exchange (`rpcscan gateway`).
    pub session: Option<&'a str>,
    /// A message to embed verbatim (must be valid JSON).
    pub msg: Option<&'a [u8]>,
}

impl<'a> Event<'a> {
    /// An event with nothing but its name.
    pub fn new(event: &'a str) -> Self {
        Event {
            event,
            from: None,
            id: None,
            reason: None,
            raw: None,
            size: None,
            code: None,
            session: None,
            msg: None,
        }
    }
}

/// A `c2s` or `s2c` record under construction.
pub struct Traffic<'a> {
    /// `c2s` or `s2c`: which way the message travels.
    pub dir: &'a str,
    /// The message, embedded verbatim (it must then be valid JSON).
    pub msg: &'a [u8],
    /// The message could not be read (not JSON-RPC): it is written as a JSON string.
    pub unreadable: bool,
    /// Who wrote the message when neither side did: `proxy` or `gateway`.
    pub origin: Option<&'a str>,
    /// The HTTP status the message came with, when it was not 2xx (`rpcscan gateway`).
    pub status: Option<u16>,
    /// The raw id of the request that this answer answers, whatever its own id says (an
    /// HTTP answer is bound to its POST, not to the id in its body).
    pub request_id: Option<&'a [u8]>,
    /// The `Mcp-Session-Id` of the exchange (`rpcscan gateway`).
    pub session: Option<&'a str>,
}

impl<'a> Traffic<'a> {
    /// A record of `msg` travelling `dir`, with nothing else.
    pub fn new(dir: &'a str, msg: &'a [u8]) -> Self {
        Traffic {
            dir,
            msg,
            unreadable: false,
            origin: None,
            status: None,
            request_id: None,
            session: None,
        }
    }
}

impl Log {
    /// `true` when records are kept (callers skip building them otherwise).
    pub fn on(&self) -> bool {
        self.shared.is_some()
    }

    /// A `c2s` or `s2c` record around a valid message.
    #[inline]
    pub fn message(&self, dir: &str, msg: &[u8]) {
        // Inline, so that without `--log` a relay's call per message is one test.
        if self.on() {
            self.traffic(Traffic::new(dir, msg));
        }
    }

    /// A `c2s` or `s2c` record around a valid message, with the exchange's session.
    pub fn session_message(&self, dir: &str, session: Option<&str>, msg: &[u8]) {
        self.traffic(Traffic { session, ..Traffic::new(dir, msg) });
    }

    /// A `c2s` or `s2c` record. One whose message is [`Traffic::unreadable`] and not UTF-8
    /// is not written: a JSON string could only hold it changed.
    pub fn traffic(&self, t: Traffic<'_>) {
        let Some(shared) = &self.shared else { return };
        let text = if t.unreadable {
            let Ok(text) = std::str::from_utf8(t.msg) else { return };
            Some(text)
        } else {
            None
        };
        let mut state = shared.lock();
        let r = start(&mut state, t.dir);
        if let Some(origin) = t.origin {
            r.extend_from_slice(b",\"origin\":");
            write_json_string(r, origin);
        }
        if let Some(status) = t.status {
            let _ = write!(r, ",\"status\":{status}");
        }
        if let Some(id) = t.request_id {
            r.extend_from_slice(b",\"request_id\":");
            r.extend_from_slice(id);
        }
        if let Some(session) = t.session {
            r.extend_from_slice(b",\"session\":");
            write_json_string(r, session);
        }
        r.extend_from_slice(b",\"msg\":");
        match text {
            Some(text) => write_json_string(r, text),
            None => r.extend_from_slice(t.msg),
        }
        end(shared, state);
    }

    /// A `proxy` record.
    pub fn event(&self, e: Event<'_>) {
        let Some(shared) = &self.shared else { return };
        let mut state = shared.lock();
        let r = start(&mut state, "proxy");
        r.extend_from_slice(b",\"event\":");
        write_json_string(r, e.event);
        if let Some(from) = e.from {
            r.extend_from_slice(b",\"from\":");
            write_json_string(r, from);
        }
        if let Some(id) = e.id {
            r.extend_from_slice(b",\"id\":");
            r.extend_from_slice(id);
        }
        if let Some(reason) = e.reason {
            r.extend_from_slice(b",\"reason\":");
            write_json_string(r, reason);
        }
        if let Some(raw) = e.raw {
            let kept = raw.get(..RAW_KEPT).unwrap_or(raw);
            r.extend_from_slice(b",\"raw\":");
            write_json_string(r, &String::from_utf8_lossy(kept));
        }
        if let Some(size) = e.size {
            let _ = write!(r, ",\"size\":{size}");
        }
        if let Some(code) = e.code {
            let _ = write!(r, ",\"code\":{code}");
        }
        if let Some(session) = e.session {
            r.extend_from_slice(b",\"session\":");
            write_json_string(r, session);
        }
        if let Some(msg) = e.msg {
            r.extend_from_slice(b",\"msg\":");
            r.extend_from_slice(msg);
        }
        end(shared, state);
    }
}

/// Begins a record at the end of the buffer: its time and `dir`.
fn start<'s>(state: &'s mut State, dir: &str) -> &'s mut Vec<u8> {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    if since.as_secs() != state.second {
        state.second = since.as_secs();
        let text = timestamp(UNIX_EPOCH + Duration::from_secs(since.as_secs()));
        state.second_text.copy_from_slice(&text.as_bytes()[..19]);
    }
    let r = &mut state.buf;
    r.extend_from_slice(b"{\"ts\":\"");
    r.extend_from_slice(&state.second_text);
    let mut micros = *b".000000Z\",\"dir\":";
    let mut us = since.subsec_micros();
    for digit in micros[1..7].iter_mut().rev() {
        *digit = b'0' + (us % 10) as u8;
        us /= 10;
    }
    r.extend_from_slice(&micros);
    write_json_string(r, dir);
    r
}

/// Ends the record at the end of the buffer, and wakes the writer when it waits for it.
fn end(shared: &Shared, mut state: MutexGuard<'_, State>) {
    state.buf.extend_from_slice(b"}\n");
    let wake = match state.waiting {
        Waiting::No => false,
        Waiting::Records => true,
        Waiting::Full => state.buf.len() >= FLUSH_SIZE,
    };
    if wake {
        state.waiting = Waiting::No;
    }
    drop(state);
    if wake {
        shared.wake.notify_one();
    }
}

/// RFC 3339 in UTC with microseconds: `2026-12-01T15:24:31.123456Z`.
pub fn timestamp(t: SystemTime) -> String {
    let since = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:06}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        since.subsec_micros()
    )
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian (Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn timestamps() {
        let at = |s: u64, us: u32| {
            timestamp(UNIX_EPOCH + Duration::from_secs(s) + Duration::from_micros(u64::from(us)))
        };
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(at(951_782_400, 7), "2000-02-29T00:00:00.000007Z");
        assert_eq!(at(1_796_138_671, 123_456), "2026-12-01T15:24:31.123456Z");
    }

    /// Records in many buffers' worth, from several threads: every one written whole, in
    /// each thread's order, with a time no earlier than the one before it in the file.
    #[test]
    fn records_are_written_whole_and_in_order() {
        let path = std::env::temp_dir().join(format!("rpcscan-log-test-{}", std::process::id()));
        let (log, writer) = open(Some(&path)).unwrap();
        let before = timestamp(SystemTime::now());
        let threads: Vec<_> = (0..4u64)
            .map(|t| {
                let log = log.clone();
                std::thread::spawn(move || {
                    for i in 0..20_000u64 {
                        let msg = format!(r#"{{"jsonrpc":"2.0","id":[{t},{i}],"method":"m"}}"#);
                        let session = "s\"1";
                        match i % 3 {
                            0 => log.session_message("c2s", Some(session), msg.as_bytes()),
                            1 => log.traffic(Traffic {
                                status: Some(502),
                                request_id: Some(b"7"),
                                ..Traffic::new("s2c", msg.as_bytes())
                            }),
                            _ => log.event(Event {
                                size: Some(i),
                                code: Some(-32600),
                                msg: Some(msg.as_bytes()),
                                ..Event::new("invalid")
                            }),
                        }
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        writer.finish();
        let text = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        let mut next = [0u64; 4];
        let mut last_ts = before;
        for line in text.lines() {
            let record: serde_json::Value = serde_json::from_str(line).unwrap();
            let ts = record["ts"].as_str().unwrap().to_owned();
            assert_eq!(ts.len(), 27, "{line}");
            assert!(ts >= last_ts, "{ts} after {last_ts}");
            last_ts = ts;
            let id = &record["msg"]["id"];
            let (t, i) = (id[0].as_u64().unwrap() as usize, id[1].as_u64().unwrap());
            assert_eq!(i, next[t], "{line}");
            next[t] += 1;
            let expected = match i % 3 {
                0 => serde_json::json!({"dir": "c2s", "session": "s\"1"}),
                1 => serde_json::json!({"dir": "s2c", "status": 502, "request_id": 7}),
                _ => {
                    serde_json::json!({"dir": "proxy", "event": "invalid", "size": i, "code": -32600})
                }
            };
            for (key, value) in expected.as_object().unwrap() {
                assert_eq!(&record[key], value, "{line}");
            }
        }
        assert_eq!(next, [20_000; 4]);
    }

    /// Records wait at most about [`FLUSH_AFTER`] in the buffer while the log is open.
    #[test]
    fn a_few_records_reach_the_file_soon() {
        let path =
            std::env::temp_dir().join(format!("rpcscan-log-soon-test-{}", std::process::id()));
        let (log, writer) = open(Some(&path)).unwrap();
        log.message("c2s", br#"{"jsonrpc":"2.0","method":"m"}"#);
        let waited = Instant::now();
        while std::fs::metadata(&path).unwrap().len() == 0 {
            assert!(waited.elapsed() < Duration::from_secs(10), "the record was not written");
            std::thread::sleep(Duration::from_millis(5));
        }
        writer.finish();
        let text = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        assert!(text.ends_with(
            r#","dir":"c2s","msg":{"jsonrpc":"2.0","method":"m"}}
"#
        ));
    }
}
