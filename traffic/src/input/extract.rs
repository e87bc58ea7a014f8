//! Messages inside log lines: `--line-format REGEX`, `--json-field PATH` (with
//! `--ts-field`, `--dir-field`), and the `--log` files of `rpcscan proxy`, recognised by
//! their first line. Each NDJSON line is one log record; [`Extract::line`] finds the message
//! in it (and its timestamp and direction labels, when the format has them), in the
//! parallel workers, one line at a time.
//!
//! A line that does not match the format, or a record without the message field, is
//! [`Skip`]ped and counted, never classified as an invalid message.

use std::time::Duration;

use std::sync::Arc;

use regex::bytes::{CaptureLocations, Regex};
use regex_automata::dfa::{dense, Automaton};
use rpcscan::{Field, Raw};

use super::formats::Named;

/// How messages are found inside log lines.
#[derive(Clone, Debug)]
pub enum Extract {
    /// `--line-format`: a regular expression with a `msg` group, and maybe `ts` and `dir`.
    Regex {
        /// The expression (unanchored unless it says `^`).
        re: Regex,
        /// Capture group index of `msg`.
        msg: usize,
        /// Capture group index of `ts`, if the expression has one.
        ts: Option<usize>,
        /// Capture group index of `dir`, if the expression has one.
        dir: Option<usize>,
        /// The fast road, when the expression ends in `(?<msg>.*)`.
        tail: Option<Box<Tail>>,
        /// `false`: the caller reads the message only, not `ts` and `dir` (every
        /// subcommand but `pair`), so the fast road finds where the prefix ends without
        /// filling capture slots.
        labels: bool,
    },
    /// `--json-field` (or a proxy log): each line is a JSON record; dotted paths name the
    /// message, its timestamp and its direction.
    Fields {
        /// Dotted path of the message member, one segment per entry.
        msg: Vec<String>,
        /// Dotted path of the timestamp member.
        ts: Option<Vec<String>>,
        /// Dotted path of the direction member.
        dir: Option<Vec<String>>,
        /// Records with this direction label are skipped and counted (a proxy log's own
        /// `proxy` records).
        skip_dir: Option<&'static [u8]>,
        /// The top-level member naming the request an answer answers (a proxy log's
        /// `request_id`).
        request_id: Option<&'static str>,
        /// The top-level member naming the record's id space (a gateway log's `session`).
        session: Option<&'static str>,
    },
    /// `--log-format NAME`, or a format recognised by an input's first lines
    /// ([`super::formats`]).
    Named(Box<Named>),
}

/// Why a line holds no message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skip {
    /// The line does not match `--line-format`, or is not a JSON object record.
    NoMatch,
    /// The record has no (single) message field, or it is `null`.
    Missing,
    /// A proxy log's `"dir":"proxy"` record: the proxy's own decision, no traffic.
    ProxyRecord,
    /// A named format's own line holding no message (a host's "Initializing server...",
    /// a logger's text message): recognised, no traffic.
    HostLine,
}

impl Skip {
    /// Every reason, in the order reports list them.
    pub const ALL: [Skip; 4] = [Skip::NoMatch, Skip::Missing, Skip::ProxyRecord, Skip::HostLine];

    /// The name in JSON reports: `no_match`, `no_message_field`, `proxy_records`,
    /// `host_lines`.
    pub fn as_str(self) -> &'static str {
        match self {
            Skip::NoMatch => "no_match",
            Skip::Missing => "no_message_field",
            Skip::ProxyRecord => "proxy_records",
            Skip::HostLine => "host_lines",
        }
    }

    /// The line does not say what it is: it counts towards an unreadable input (unlike
    /// a log writer's own records, which are known to hold no traffic).
    pub fn is_unreadable(self) -> bool {
        matches!(self, Skip::NoMatch | Skip::Missing)
    }
}

/// Where a line's message is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// `line[start..end]`, used in place.
    InLine {
        /// First byte of the message in the line.
        start: usize,
        /// One past its last byte.
        end: usize,
    },
    /// A JSON string at `line[at..]`, decoded into the caller's buffer.
    Decoded {
        /// Offset of the string's opening quote in the line.
        at: usize,
    },
}

/// What a line holds: the message's place, and the raw timestamp and direction label.
#[derive(Clone, Copy, Debug)]
pub struct Found<'l> {
    /// Where the message is.
    pub place: Place,
    /// The raw timestamp value, if the format names one and the line has it.
    pub ts: Option<&'l [u8]>,
    /// The raw direction label, likewise.
    pub dir: Option<&'l [u8]>,
    /// The raw id of the request the record's answer answers, when the record says so (a
    /// proxy or gateway log's `request_id`).
    pub request_id: Option<&'l [u8]>,
    /// The raw id space of the record (a gateway log's `session`: each MCP session numbers
    /// its requests on its own).
    pub session: Option<&'l [u8]>,
}

/// An expression `P(?<msg>.*)` (or `.+`, maybe then `$`): the message is the rest of the
/// line after `P`. `P(?<msg>)` alone finds where it starts, without running a capturing
/// engine over the message; when the rest of the line is not all `.` (bytes that are not
/// UTF-8, for a Unicode `.`), the whole expression decides, as without this road.
#[derive(Clone, Debug)]
pub struct Tail {
    /// `P(?<msg>)`.
    prefix: Regex,
    /// `P` as a fully compiled DFA, when it fits in [`PREFIX_DFA_LIMIT`]: where the message
    /// starts without labels to fill (`regex`'s own lazy DFA otherwise).
    dfa: Option<Arc<dense::DFA<Vec<u32>>>>,
    /// Capture group indexes in `prefix`: `msg`, `ts`, `dir`.
    msg: usize,
    ts: Option<usize>,
    dir: Option<usize>,
    /// `.` is Unicode's: the rest must be UTF-8.
    unicode: bool,
    /// `.+`: the message must not be empty.
    nonempty: bool,
}

impl Tail {
    /// `true` when the prefix runs as a fully compiled DFA.
    #[cfg(test)]
    pub(super) fn has_dfa(&self) -> bool {
        self.dfa.is_some()
    }

    /// The fast road for `pattern`, if it has the shape, proven on the parsed expressions:
    /// the pattern is a concatenation ending in the `msg` group of a greedy `.*` or `.+`
    /// (and maybe `$`), and `P(?<msg>)` parses to the same concatenation before it.
    fn of(pattern: &str) -> Option<Tail> {
        use regex_syntax::hir::{Class, Hir, HirKind, Look};
        let parse = |p: &str| regex_syntax::ParserBuilder::new().utf8(false).build().parse(p).ok();
        let hir = parse(pattern)?;
        let HirKind::Concat(parts) = hir.kind() else { return None };
        let (mut last, mut before) = parts.split_last()?;
        if matches!(last.kind(), HirKind::Look(Look::End)) {
            (last, before) = before.split_last()?;
        }
        let HirKind::Capture(group) = last.kind() else { return None };
        let HirKind::Repetition(rep) = group.sub.kind() else { return None };
        if group.name.as_deref() != Some("msg") || rep.max.is_some() || rep.min > 1 || !rep.greedy {
            return None;
        }
        // Any character (or byte) but maybe `\n`, which a line never holds.
        let unicode = match rep.sub.kind() {
            HirKind::Class(Class::Unicode(class)) => {
                let ranges: Vec<(char, char)> =
                    class.ranges().iter().map(|r| (r.start(), r.end())).collect();
                let all = [('\0', char::MAX)];
                let but_newline = [('\0', '\t'), ('\u{b}', char::MAX)];
                if ranges != all && ranges != but_newline {
                    return None;
                }
                true
            }
            HirKind::Class(Class::Bytes(class)) => {
                let ranges: Vec<(u8, u8)> =
                    class.ranges().iter().map(|r| (r.start(), r.end())).collect();
                if ranges != [(0, 0xFF)] && ranges != [(0, 9), (0x0B, 0xFF)] {
                    return None;
                }
                false
            }
            _ => return None,
        };
        let head = ["(?<msg>.*)", "(?P<msg>.*)", "(?<msg>.+)", "(?P<msg>.+)"]
            .iter()
            .find_map(|tail| pattern.strip_suffix('$').unwrap_or(pattern).strip_suffix(tail))?;
        let prefix_pattern = format!("{head}(?<msg>)");
        let prefix_hir = parse(&prefix_pattern)?;
        let same = match prefix_hir.kind() {
            HirKind::Concat(p) => p.split_last().is_some_and(|(_, b)| b == before),
            HirKind::Capture(_) => before.is_empty(),
            _ => false,
        };
        let empty_msg = |h: &Hir| matches!(h.kind(), HirKind::Capture(c) if c.name.as_deref() == Some("msg") && matches!(c.sub.kind(), HirKind::Empty));
        let ends_in_msg = match prefix_hir.kind() {
            HirKind::Concat(p) => p.last().is_some_and(empty_msg),
            _ => empty_msg(&prefix_hir),
        };
        if !same || !ends_in_msg {
            return None;
        }
        let prefix = Regex::new(&prefix_pattern).ok()?;
        let index = |name: &str| prefix.capture_names().position(|n| n == Some(name));
        // The same syntax as `regex::bytes::Regex` (Unicode on, matches may split UTF-8).
        let dfa = dense::Builder::new()
            .syntax(regex_automata::util::syntax::Config::new().utf8(false))
            .thompson(regex_automata::nfa::thompson::Config::new().utf8(false))
            .configure(
                dense::Config::new()
                    .dfa_size_limit(Some(PREFIX_DFA_LIMIT))
                    .determinize_size_limit(Some(PREFIX_DFA_LIMIT)),
            )
            .build(&prefix_pattern)
            .ok()
            .map(Arc::new);
        Some(Tail {
            dfa,
            msg: index("msg")?,
            ts: index("ts"),
            dir: index("dir"),
            prefix,
            unicode,
            nonempty: rep.min == 1,
        })
    }
}

/// The largest fully compiled DFA of a `--line-format` prefix, in bytes (a prefix with
/// large Unicode classes stays on `regex`'s lazy DFA).
const PREFIX_DFA_LIMIT: usize = 1 << 20;

/// Per-worker state of an extraction: regex capture slots, the decoding buffer.
#[derive(Default)]
pub struct Scratch {
    locations: Option<CaptureLocations>,
    /// The capture slots of [`Tail::prefix`].
    tail_locations: Option<CaptureLocations>,
    /// A message decoded from a JSON string (reused line after line).
    pub decoded: Vec<u8>,
}

impl Scratch {
    /// Scratch for an extraction that needs none.
    pub(super) fn empty() -> Scratch {
        Scratch::default()
    }
}

impl Extract {
    /// `--line-format`: the expression must name a `msg` group.
    pub fn regex(pattern: &str) -> Result<Extract, String> {
        let re = Regex::new(pattern).map_err(|e| e.to_string())?;
        let index = |name: &str| re.capture_names().position(|n| n == Some(name));
        let msg = index("msg").ok_or("the expression has no (?<msg>...) group")?;
        let (ts, dir) = (index("ts"), index("dir"));
        let tail = Tail::of(pattern).map(Box::new);
        Ok(Extract::Regex { re, msg, ts, dir, tail, labels: true })
    }

    /// The same extraction for a caller that reads only the messages, never the `ts` and
    /// `dir` labels ([`Found::ts`] and [`Found::dir`] may then be `None`).
    #[must_use]
    pub fn messages_only(self) -> Extract {
        match self {
            Extract::Regex { re, msg, ts, dir, tail, .. } => {
                Extract::Regex { re, msg, ts, dir, tail, labels: false }
            }
            Extract::Named(named) => Extract::Named(Box::new(named.messages_only())),
            fields => fields,
        }
    }

    /// `--json-field` and friends, dotted paths (`msg`, `event.payload`).
    pub fn fields(msg: &str, ts: Option<&str>, dir: Option<&str>) -> Result<Extract, String> {
        let path = |p: &str| -> Result<Vec<String>, String> {
            let keys: Vec<String> = p.split('.').map(str::to_owned).collect();
            if keys.iter().any(String::is_empty) {
                return Err(format!("{p:?} is not a dotted path (examples: msg, event.payload)"));
            }
            Ok(keys)
        };
        Ok(Extract::Fields {
            msg: path(msg)?,
            ts: ts.map(path).transpose()?,
            dir: dir.map(path).transpose()?,
            skip_dir: None,
            request_id: None,
            session: None,
        })
    }

    /// The format of `rpcscan proxy --log` files.
    pub fn proxy_log() -> Extract {
        let key = |k: &str| Some(vec![k.to_owned()]);
        Extract::Fields {
            msg: vec!["msg".to_owned()],
            ts: key("ts"),
            dir: key("dir"),
            skip_dir: Some(b"proxy"),
            request_id: Some("request_id"),
            session: Some("session"),
        }
    }

    /// `true` when `line` (an input's first line) is a `rpcscan proxy --log` record: a JSON
    /// object with a `ts` string and a `dir` string, and either a `msg` member (traffic) or
    /// an `event` (the proxy's own record, which a log may start with: a `signal`, say).
    pub fn is_proxy_log(line: &[u8]) -> bool {
        let record = Raw::lenient(line);
        if !record.is_object() {
            return false;
        }
        let [ts, dir, msg, event] = record.get_many(["ts", "dir", "msg", "event"]);
        let Some(dir) = dir.as_str() else {
            return false;
        };
        let proxy_event = dir == "proxy" && event.as_str().is_some();
        ts.as_str().is_some() && (msg.unique().is_some() || proxy_event)
    }

    /// What reports call this extraction: the format's name, `rpcscan` for proxy and
    /// gateway logs, `--line-format` or `--json-field`.
    pub fn name(&self) -> &'static str {
        match self {
            Extract::Regex { .. } => "--line-format",
            Extract::Fields { skip_dir: Some(_), .. } => "rpcscan",
            Extract::Fields { .. } => "--json-field",
            Extract::Named(named) => named.format().name,
        }
    }

    /// A worker's scratch space for this extraction.
    pub fn scratch(&self) -> Scratch {
        if let Extract::Named(named) = self {
            return named.scratch();
        }
        Scratch {
            locations: match self {
                Extract::Regex { re, .. } => Some(re.capture_locations()),
                Extract::Fields { .. } | Extract::Named(_) => None,
            },
            tail_locations: match self {
                Extract::Regex { tail: Some(tail), .. } => Some(tail.prefix.capture_locations()),
                _ => None,
            },
            decoded: Vec::new(),
        }
    }

    /// Finds the message in one line (without its line end). A message that was a JSON
    /// string is decoded into `scratch.decoded`.
    pub fn line<'l>(&self, line: &'l [u8], scratch: &mut Scratch) -> Result<Found<'l>, Skip> {
        match self {
            Extract::Named(named) => named.line(line, scratch),
            Extract::Regex { re, msg, ts, dir, tail, labels } => {
                if let (Some(tail), Some(locations)) = (tail, scratch.tail_locations.as_mut()) {
                    // Where `P` ends is where the message starts: without labels to fill,
                    // a match (a DFA, no capture slots) says it.
                    let start = if *labels {
                        tail.prefix.captures_read(locations, line).ok_or(Skip::NoMatch)?;
                        locations.get(tail.msg).ok_or(Skip::Missing)?.0
                    } else if let Some(found) = tail.dfa.as_ref().and_then(|dfa| {
                        // Where the leftmost-first match ends, as `find` reports it. The DFA
                        // gives up (an error) only on a quit byte, which it is built
                        // without; `find` would decide then.
                        dfa.try_search_fwd(&regex_automata::Input::new(line)).ok()
                    }) {
                        found.ok_or(Skip::NoMatch)?.offset()
                    } else {
                        tail.prefix.find(line).ok_or(Skip::NoMatch)?.end()
                    };
                    let rest = line.get(start..).unwrap_or_default();
                    let fits = !(tail.nonempty && rest.is_empty())
                        && (!tail.unicode || simdutf8::basic::from_utf8(rest).is_ok());
                    if fits {
                        let group = |i: Option<usize>| {
                            let (start, end) = locations.get(i?)?;
                            line.get(start..end)
                        };
                        let place = Place::InLine { start, end: line.len() };
                        if !*labels {
                            let (ts, dir) = (None, None);
                            return Ok(Found { place, ts, dir, request_id: None, session: None });
                        }
                        let (ts, dir) = (group(tail.ts), group(tail.dir));
                        return Ok(Found { place, ts, dir, request_id: None, session: None });
                    }
                }
                let Some(locations) = scratch.locations.as_mut() else {
                    return Err(Skip::NoMatch);
                };
                re.captures_read(locations, line).ok_or(Skip::NoMatch)?;
                let group = |i: Option<usize>| {
                    let (start, end) = locations.get(i?)?;
                    line.get(start..end)
                };
                let (start, end) = locations.get(*msg).ok_or(Skip::Missing)?;
                let place = Place::InLine { start, end };
                let (ts, dir) = (group(*ts), group(*dir));
                Ok(Found { place, ts, dir, request_id: None, session: None })
            }
            Extract::Fields { msg, ts, dir, skip_dir, request_id, session } => {
                let record = Raw::lenient(line);
                if !record.is_object() {
                    return Err(Skip::NoMatch);
                }
                // One pass over the record for the five top-level keys.
                let m0 = first_key(Some(msg), "");
                let [m, t, d, r, s] = record.get_many([
                    m0,
                    first_key(ts.as_ref(), m0),
                    first_key(dir.as_ref(), m0),
                    request_id.unwrap_or(m0),
                    session.unwrap_or(m0),
                ]);
                let value = |field: Field<'l>, path: Option<&Vec<String>>| -> Option<Raw<'l>> {
                    let mut value = field.unique()?;
                    for key in path?.get(1..)? {
                        value = value.get(key).unique()?;
                    }
                    Some(value)
                };
                let label = |raw: Raw<'l>| raw.as_str().map_or(raw.as_bytes(), |s| s.raw());
                let dir = value(d, dir.as_ref()).map(label);
                if dir.is_some() && dir == *skip_dir {
                    return Err(Skip::ProxyRecord);
                }
                let ts = value(t, ts.as_ref()).map(label);
                let message = value(m, Some(msg)).filter(|v| !v.is_null()).ok_or(Skip::Missing)?;
                let at = message.offset();
                let place = match message.as_str() {
                    Some(s) => {
                        scratch.decoded.clear();
                        s.decode_into(&mut scratch.decoded);
                        Place::Decoded { at }
                    }
                    None => Place::InLine { start: at, end: at + message.len() },
                };
                let request_id = request_id.and(r.unique()).map(|id| id.as_bytes());
                let session = session.and(s.unique()).map(label);
                Ok(Found { place, ts, dir, request_id, session })
            }
        }
    }
}

/// The first key of a path, or `or` without one.
fn first_key<'p>(path: Option<&'p Vec<String>>, or: &'p str) -> &'p str {
    path.and_then(|p| p.first()).map_or(or, String::as_str)
}

/// Unix times from this many on are milliseconds, below it seconds: 10^11 seconds is in
/// the year 5138, 10^11 milliseconds early in 1973.
const MILLIS_FROM: u64 = 100_000_000_000;

/// A log timestamp as time since the Unix epoch, detected per value:
///
/// * RFC 3339 / ISO 8601 date-times (`2025-05-14T22:53:22.480Z`, `+02:00` offsets, a space
///   for the `T`); one without a zone or offset is taken as UTC;
/// * Unix time, integer or fractional: seconds, or milliseconds from 10^11 on (see
///   `MILLIS_FROM`).
///
/// Times before 1970 and anything else are no timestamp (`None`).
pub fn parse_time(raw: &[u8]) -> Option<Duration> {
    let text = std::str::from_utf8(raw).ok()?.trim();
    if text.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return unix_time(text);
    }
    let ts = match text.parse::<jiff::Timestamp>() {
        Ok(ts) => ts,
        Err(_) => {
            let civil: jiff::civil::DateTime = text.parse().ok()?;
            civil.to_zoned(jiff::tz::TimeZone::UTC).ok()?.timestamp()
        }
    };
    let secs = u64::try_from(ts.as_second()).ok()?;
    let nanos = u32::try_from(ts.subsec_nanosecond()).ok()?;
    Some(Duration::new(secs, nanos))
}

/// `1764410400`, `1764410400.12`, `1764410400120`, `1764410400120.5`.
fn unix_time(text: &str) -> Option<Duration> {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    if int.is_empty() || frac.contains('.') {
        return None;
    }
    let int: u64 = int.parse().ok()?;
    // Nine fractional digits at most count (nanoseconds).
    let digits = frac.get(..frac.len().min(9)).unwrap_or_default();
    let mut nanos: u64 = if digits.is_empty() { 0 } else { digits.parse().ok()? };
    for _ in digits.len()..9 {
        nanos *= 10;
    }
    if int >= MILLIS_FROM {
        // Milliseconds: the fraction is of a millisecond.
        let whole = Duration::from_millis(int);
        Some(whole + Duration::from_nanos(nanos / 1_000_000))
    } else {
        Some(Duration::new(int, u32::try_from(nanos).ok()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(d: Option<Duration>) -> Option<u128> {
        d.map(|d| d.as_millis())
    }

    #[test]
    fn timestamps() {
        #[rustfmt::skip]
        let cases: &[(&str, Option<u128>)] = &[
            ("2025-05-14T22:53:22.480Z", Some(1_747_263_202_480)),
            ("2025-05-14T22:53:22.480", Some(1_747_263_202_480)),
            ("2025-05-14 22:53:22.480Z", Some(1_747_263_202_480)),
            ("2025-05-15T00:53:22.480+02:00", Some(1_747_263_202_480)),
            ("1764410400.12", Some(1_764_410_400_120)),
            ("1764410400", Some(1_764_410_400_000)),
            ("1764410400120", Some(1_764_410_400_120)),
            ("1764410400120.9", Some(1_764_410_400_120)),
            ("1969-12-31T23:59:59Z", None),
            ("yesterday", None),
            ("1.2.3", None),
            (".5", None),
            ("", None),
        ];
        for &(raw, want) in cases {
            assert_eq!(ms(parse_time(raw.as_bytes())), want, "{raw}");
        }
    }

    /// The fast road for `P(?<msg>.*)` finds what the whole expression finds.
    #[test]
    fn regex_tail_road_agrees_with_the_expression() {
        #[rustfmt::skip]
        let patterns: &[(&str, bool)] = &[
            (r"^(?<ts>\S+) \[(?<dir>STDIN|STDOUT)\] (?<msg>.*)$", true),
            (r"^(?<ts>\S+) \[(?<dir>STDIN|STDOUT)\] (?P<msg>.+)", true),
            (r"(?-u)^\S+ (?<msg>.*)", true),
            (r"(?s)\] (?<msg>.*)$", true),
            (r"(?<msg>.*)$", true),
            (r"x|(?<msg>.*)$", false),
            (r"(?m)^\S+ (?<msg>.*)$", false),
            (r"^\S+ (?<msg>.*?)$", false),
            (r"^\S+ (?<msg>\{.*)$", false),
            (r"^\S+ (?<msg>.*) end$", false),
            (r"^(?<ts>\S+) (?<msg>[^\n]*)$", false),
        ];
        let lines: &[&[u8]] = &[
            b"2025-05-14T22:53:22.480Z [STDIN] {\"jsonrpc\":\"2.0\"}",
            b"2025 [STDOUT] ",
            b"2025 [STDOUT] {\"a\":\"\xff\"}",
            b"\xc3 [STDIN] {}",
            b"nospace",
            b"a ] b ] c",
            b"x] ] ] {\"a\":1}",
            b"\xff [STDIN] {}",
            b"2025 [STDIN]  {}",
            b"",
        ];
        for &(pattern, fast) in patterns {
            let with = Extract::regex(pattern).unwrap();
            let bare = with.clone().messages_only();
            let Extract::Regex { re, msg, ts, dir, tail, labels } =
                Extract::regex(pattern).unwrap()
            else {
                unreachable!()
            };
            assert!(labels);
            assert_eq!(tail.is_some(), fast, "{pattern}");
            // The message-only road runs the compiled DFA for each of these.
            assert!(tail.as_ref().is_none_or(|t| t.dfa.is_some()), "{pattern}");
            let without = Extract::Regex { re, msg, ts, dir, tail: None, labels };
            let (mut a, mut b, mut c) = (with.scratch(), without.scratch(), bare.scratch());
            for &line in lines {
                let got = with.line(line, &mut a).map(|f| (f.place, f.ts, f.dir));
                let want = without.line(line, &mut b).map(|f| (f.place, f.ts, f.dir));
                assert_eq!(got, want, "{pattern} on {:?}", String::from_utf8_lossy(line));
                // Without labels: the same message, the same skips.
                let place = bare.line(line, &mut c).map(|f| f.place);
                assert_eq!(
                    place,
                    want.map(|w| w.0),
                    "{pattern} on {:?}",
                    String::from_utf8_lossy(line)
                );
            }
        }
    }

    #[test]
    fn regex_needs_a_msg_group() {
        assert!(Extract::regex(r"^\S+ (?<msg>\{.*)").is_ok());
        assert!(Extract::regex(r"^\S+ (\{.*)").is_err());
        assert!(Extract::regex(r"(?<msg>").is_err());
        assert!(Extract::fields("a..b", None, None).is_err());
    }

    #[test]
    fn fields_in_place_decoded_missing_and_proxy() {
        let e = Extract::fields("event.payload", Some("time"), Some("direction")).unwrap();
        let mut s = e.scratch();
        let line = br#"{"time":1.5,"direction":"out","event":{"payload":"{\"id\":1}"}}"#;
        let found = e.line(line, &mut s).unwrap();
        assert_eq!((found.ts, found.dir), (Some(&b"1.5"[..]), Some(&b"out"[..])));
        assert!(matches!(found.place, Place::Decoded { .. }));
        assert_eq!(s.decoded, br#"{"id":1}"#);
        assert_eq!(e.line(br#"{"event":{}}"#, &mut s).unwrap_err(), Skip::Missing);
        assert_eq!(e.line(b"plain text", &mut s).unwrap_err(), Skip::NoMatch);
        let p = Extract::proxy_log();
        let mut s = p.scratch();
        let line = br#"{"ts":"x","dir":"c2s","msg":{"id":1}}"#;
        assert!(Extract::is_proxy_log(line));
        let found = p.line(line, &mut s).unwrap();
        assert_eq!(found.place, Place::InLine { start: 28, end: 36 });
        assert_eq!(found.request_id, None);
        // A gateway's answer bound to its request, whatever its own id.
        let answer = br#"{"ts":"x","dir":"s2c","request_id":"a\u0062","msg":{"id":null}}"#;
        assert_eq!(p.line(answer, &mut s).unwrap().request_id, Some(&br#""a\u0062""#[..]));
        // `--json-field` names no link: the member is just another member.
        let fields = Extract::fields("msg", Some("ts"), Some("dir")).unwrap();
        let mut plain = fields.scratch();
        assert_eq!(fields.line(answer, &mut plain).unwrap().request_id, None);
        let own = br#"{"ts":"x","dir":"proxy","event":"kill"}"#;
        assert_eq!(p.line(own, &mut s).unwrap_err(), Skip::ProxyRecord);
        assert!(Extract::is_proxy_log(own));
        assert!(!Extract::is_proxy_log(br#"{"jsonrpc":"2.0","method":"m"}"#));
        assert!(!Extract::is_proxy_log(br#"{"ts":"x","dir":"c2s"}"#));
    }
}
