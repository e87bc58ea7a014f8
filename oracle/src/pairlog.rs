//! Logs for the pairing reference ([`crate::pair`]): interleaved requests and responses of
//! both directions, ids reused after and during flight and re-spelled with escapes, big
//! and `-0` ids, cancellations, progress, orphans, `null`-id errors, and timestamps (all,
//! some or none). A pure function of its seed.
//!
//! [`wrap`] writes such a log the way hosts and loggers do, each message inside a line of
//! its own ([`Wrapper`]: prefixes, JSON records holding the message as an object or as a
//! string, `rpcscan proxy --log` records), with lines that hold no message between them,
//! and says which line each message is on and how `rpcscan` is told to read them.
//!
//! ```
//! use rpcscan_oracle::pairlog;
//!
//! let log = pairlog::log(3, 200);
//! assert_eq!(log.len(), 200);
//! assert_eq!(log, pairlog::log(3, 200));
//! assert!(log.iter().all(|e| rpcscan_oracle::classify(&e.bytes).is_valid()));
//! ```

use crate::pair::Entry;
use crate::rng::Rng;

/// Spellings of ids; each inner list holds spellings of one decoded value.
const IDS: &[&[&str]] = &[
    &["0", "-0"],
    &["1"],
    &["2"],
    &["7"],
    &[r#""1""#],
    &[r#""a""#, r#""\u0061""#],
    &[r#""ab""#, r#""a\u0062""#, r#""\u0061\u0062""#],
    &[r#""é""#, r#""\u00e9""#],
    &[r#""😀""#, r#""\ud83d\ude00""#],
    &["18446744073709551617"],
    &["18446744073709551616"],
    &["-9223372036854775809"],
];

/// Spellings of progress tokens, grouped like [`IDS`].
const TOKENS: &[&[&str]] = &[&["1"], &[r#""1""#], &[r#""t""#, r#""\u0074""#], &["42"]];

const METHODS: &[&str] = &[
    "ping",
    "tools/list",
    "tools/call",
    "resources/read",
    "sampling/createMessage",
    "t\\u006fols/call",
];

const TOOLS: &[&str] = &["echo", "get_weather", "e\\u0063ho"];

const CODES: &[&str] = &["-32601", "-32602", "-32603", "-32000", "1", "-0"];

/// One of a group's spellings.
fn spell(rng: &mut Rng, groups: &[&[&'static str]], group: usize) -> &'static str {
    let spellings = groups[group % groups.len()];
    spellings[rng.below(spellings.len())]
}

/// A log of `n` valid messages.
pub fn log(seed: u64, n: usize) -> Vec<Entry> {
    let mut rng = Rng::new(seed);
    // How this log says which way messages went and when.
    let directions = rng.percent(60);
    let times = rng.below(3); // 0: none, 1: some, 2: all
    let mut now = 1_764_410_400_000u64;
    // Requests sent so far that a response may answer: (id group, direction).
    let mut sent: Vec<(usize, Option<bool>)> = Vec::new();
    let mut log = Vec::with_capacity(n);
    while log.len() < n {
        now += rng.below(400) as u64;
        let direction = directions.then(|| rng.percent(75));
        let time_ms = match times {
            0 => None,
            1 => rng.percent(80).then_some(now),
            _ => Some(now),
        };
        let json = match rng.below(100) {
            // A request; clients (`true`) send most of them.
            0..=34 => {
                let group = rng.below(IDS.len());
                sent.push((group, direction));
                request(&mut rng, group)
            }
            // A response to something sent, maybe long ago, maybe re-spelled.
            35..=69 if !sent.is_empty() => {
                let (group, request_direction) = sent.swap_remove(rng.below(sent.len()));
                let id = spell(&mut rng, IDS, group);
                let response = response(&mut rng, id);
                if rng.percent(90) {
                    // The response goes back the other way, as it should.
                    let direction = request_direction.map(|d| !d);
                    log.push(Entry { direction, time_ms, bytes: response.into_bytes() });
                    continue;
                }
                response
            }
            // A response to anything at all: often an orphan.
            35..=74 => {
                let group = rng.below(IDS.len());
                let id = spell(&mut rng, IDS, group);
                response(&mut rng, id)
            }
            75..=79 => {
                let id = if rng.percent(50) { r#","id":null"# } else { "" };
                format!(
                    r#"{{"jsonrpc":"2.0"{id},"error":{{"code":-32700,"message":"Parse error"}}}}"#
                )
            }
            80..=86 => {
                let group = rng.below(IDS.len());
                let id = spell(&mut rng, IDS, group);
                format!(
                    r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id},"reason":"user"}}}}"#
                )
            }
            87..=95 => {
                let group = rng.below(TOKENS.len());
                let token = spell(&mut rng, TOKENS, group);
                format!(
                    r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{token},"progress":1}}}}"#
                )
            }
            _ => r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
        };
        log.push(Entry { direction, time_ms, bytes: json.into_bytes() });
    }
    log
}

fn request(rng: &mut Rng, group: usize) -> String {
    let id = spell(rng, IDS, group);
    let method = rng.pick(METHODS);
    let mut params = Vec::new();
    if method.contains("call") || rng.percent(20) {
        params.push(format!(r#""name":"{}""#, rng.pick(TOOLS)));
    }
    if rng.percent(40) {
        let group = rng.below(TOKENS.len());
        let token = spell(rng, TOKENS, group);
        params.push(format!(r#""_meta":{{"progressToken":{token}}}"#));
    }
    if rng.percent(5) {
        // A duplicated `_meta` or `name`: neither counts.
        params.push(r#""_meta":{},"name":"dup""#.to_owned());
    }
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{}}}}}"#,
        params.join(",")
    )
}

fn response(rng: &mut Rng, id: &str) -> String {
    if rng.percent(70) {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#)
    } else {
        let code = rng.pick(CODES);
        format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":"x"}}}}"#)
    }
}

/// How [`wrap`] writes each message into a log line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wrapper {
    /// `2025-05-14T22:53:22.480Z [STDIN] {...}`: an RFC 3339 time (`-` when unknown), now
    /// and then a `<host>` tag that is not UTF-8, the direction in brackets (none when
    /// unknown), the message.
    Prefix,
    /// `{"ts":"2026-11-29T10:00:00.120Z","dir":"c2s","session":"a1","msg":{...}}`: the
    /// message embedded as an object; `ts` without a zone half the time (UTC).
    Record,
    /// `{"time":1764410400.12,"direction":"out","payload":"{\"jsonrpc\":...}"}`: the
    /// message as a JSON string; the time in Unix seconds (fractional) or milliseconds.
    Payload,
    /// `rpcscan proxy --log` records (`ts`, `dir` `c2s`/`s2c`, `msg`), with the proxy's
    /// own `"dir":"proxy"` records between them. Every entry needs a direction and a time.
    ProxyLog,
}

impl Wrapper {
    /// Every wrapper.
    pub const ALL: [Wrapper; 4] =
        [Wrapper::Prefix, Wrapper::Record, Wrapper::Payload, Wrapper::ProxyLog];
}

/// A wrapped log: its bytes, and the 1-based line of each entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wrapped {
    /// The log file.
    pub bytes: Vec<u8>,
    /// `lines[i]`: the line holding entry `i`.
    pub lines: Vec<u64>,
    /// Lines that hold no message (they do not match, or lack the message member), and
    /// proxy records, in that order.
    pub skipped: (u64, u64),
    /// The `rpcscan` options that read it (none for a proxy log: it is recognised).
    pub args: &'static [&'static str],
}

/// The `--line-format` of [`Wrapper::Prefix`] logs. `(?-u)` lets the prefix hold any bytes.
pub const PREFIX_FORMAT: &str =
    r"(?-u)^(?<ts>\S+) (?:<\S*> )?(?:\[(?<dir>STDIN|STDOUT)\] )?(?<msg>\{.*)$";

/// Writes `log` as `wrapper` says, with lines that hold no message between the entries
/// (chosen by `seed`).
pub fn wrap(log: &[Entry], wrapper: Wrapper, seed: u64) -> Wrapped {
    let mut rng = Rng::new(seed);
    let mut out = Wrapped {
        bytes: Vec::new(),
        lines: Vec::with_capacity(log.len()),
        skipped: (0, 0),
        args: match wrapper {
            Wrapper::Prefix => &["--line-format", PREFIX_FORMAT],
            Wrapper::Record => &["--json-field", "msg", "--ts-field", "ts", "--dir-field", "dir"],
            Wrapper::Payload => {
                &["--json-field", "event.payload", "--ts-field", "time", "--dir-field", "direction"]
            }
            Wrapper::ProxyLog => &[],
        },
    };
    let mut line = 0u64;
    for (i, entry) in log.iter().enumerate() {
        // The first line of a proxy log is a record of traffic: that is how it is told.
        if i > 0 && rng.percent(10) {
            let noise: &[u8] = match wrapper {
                Wrapper::Prefix => match rng.below(3) {
                    0 => b"# server restarted",
                    1 => b"\xff\xfe [STDERR] not a message",
                    _ => b"2025-05-14T22:53:22.480Z [STDERR] warning: slow",
                },
                Wrapper::Record => br#"{"ts":"2026-11-29T10:00:00Z","level":"info","text":"hi"}"#,
                Wrapper::Payload => br#"{"time":1764410400,"event":{"kind":"connect"}}"#,
                Wrapper::ProxyLog => {
                    br#"{"ts":"2026-12-01T15:24:31.130001Z","dir":"proxy","event":"kill"}"#
                }
            };
            out.bytes.extend_from_slice(noise);
            out.bytes.push(b'\n');
            line += 1;
            match wrapper {
                Wrapper::ProxyLog => out.skipped.1 += 1,
                _ => out.skipped.0 += 1,
            }
        }
        let msg = &entry.bytes;
        let b = &mut out.bytes;
        match wrapper {
            Wrapper::Prefix => {
                match entry.time_ms {
                    Some(ms) => b.extend_from_slice(rfc3339(ms, true).as_bytes()),
                    None => b.push(b'-'),
                }
                b.push(b' ');
                if rng.percent(10) {
                    // A host tag that is not UTF-8.
                    b.extend_from_slice(b"<\xc3(host> ");
                }
                if let Some(d) = entry.direction {
                    b.extend_from_slice(if d { b"[STDIN] " } else { b"[STDOUT] " });
                }
                b.extend_from_slice(msg);
            }
            Wrapper::Record => {
                b.push(b'{');
                if let Some(ms) = entry.time_ms {
                    let zone = rng.percent(50);
                    b.extend_from_slice(format!(r#""ts":"{}","#, rfc3339(ms, zone)).as_bytes());
                }
                if let Some(d) = entry.direction {
                    b.extend_from_slice(if d { br#""dir":"c2s","# } else { br#""dir":"s2c","# });
                }
                b.extend_from_slice(br#""session":"a1","msg":"#);
                b.extend_from_slice(msg);
                b.push(b'}');
            }
            Wrapper::Payload => {
                b.push(b'{');
                if let Some(ms) = entry.time_ms {
                    let time = if rng.percent(50) {
                        format!("{}.{:03}", ms / 1000, ms % 1000)
                    } else {
                        ms.to_string()
                    };
                    b.extend_from_slice(format!(r#""time":{time},"#).as_bytes());
                }
                if let Some(d) = entry.direction {
                    let d = if d { "in" } else { "out" };
                    b.extend_from_slice(format!(r#""direction":"{d}","#).as_bytes());
                }
                b.extend_from_slice(br#""event":{"payload":"#);
                json_string(b, msg);
                b.extend_from_slice(b"}}");
            }
            Wrapper::ProxyLog => {
                let ms = entry.time_ms.unwrap_or(0);
                let dir = if entry.direction.unwrap_or(true) { "c2s" } else { "s2c" };
                b.extend_from_slice(
                    format!(r#"{{"ts":"{}","dir":"{dir}","msg":"#, rfc3339(ms, true)).as_bytes(),
                );
                b.extend_from_slice(msg);
                b.push(b'}');
            }
        }
        b.push(b'\n');
        line += 1;
        out.lines.push(line);
    }
    out
}

/// `bytes` (UTF-8) as a JSON string: quotes, backslashes and control characters escaped,
/// and now and then a character spelled `\uXXXX`.
fn json_string(out: &mut Vec<u8>, bytes: &[u8]) {
    out.push(b'"');
    for &b in bytes {
        match b {
            b'"' => out.extend_from_slice(br#"\""#),
            b'\\' => out.extend_from_slice(br"\\"),
            b'/' => out.extend_from_slice(br"\/"),
            0..=0x1f => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
            _ => out.push(b),
        }
    }
    out.push(b'"');
}

/// Milliseconds since the Unix epoch as an RFC 3339 UTC time (`Z`), or without a zone.
pub fn rfc3339(ms: u64, zone: bool) -> String {
    let secs = ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}{}",
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        ms % 1000,
        if zone { "Z" } else { "" }
    )
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian (H. Hinnant's
/// algorithm, for days from 1970 on).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_lines() {
        assert_eq!(rfc3339(1_747_263_202_480, true), "2025-05-14T22:53:22.480Z");
        assert_eq!(rfc3339(0, false), "1970-01-01T00:00:00.000");
        assert_eq!(rfc3339(951_782_400_000, true), "2000-02-29T00:00:00.000Z");
        let log = log(5, 300);
        for wrapper in Wrapper::ALL {
            let wrapped = wrap(&log, wrapper, 9);
            let lines = wrapped.bytes.iter().filter(|&&b| b == b'\n').count() as u64;
            let skipped = wrapped.skipped.0 + wrapped.skipped.1;
            assert_eq!(lines, log.len() as u64 + skipped, "{wrapper:?}");
            assert_eq!(wrapped.lines.len(), log.len());
            assert!(skipped > 0);
        }
    }
}
