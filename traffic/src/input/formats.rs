//! Named log formats: the logs MCP hosts and common tools write, each read without an
//! expression to write (`--log-format NAME`), and recognised from an input's first lines
//! when no option says how to read it.
//!
//! A format knows three kinds of line: a line holding a message (with its timestamp and
//! the host's direction words, mapped to `c2s` / `s2c`), the host's own line holding none
//! ([`Skip::HostLine`]: "Initializing server...", a connection state), and a line it does
//! not recognise ([`Skip::NoMatch`]). The last two are counted, never classified: a line
//! the format does not know is never read as a message.
//!
//! Each format is built on the same extraction as `--line-format` or `--json-field` (the
//! message's place found by one prefix match, a DFA when it fits), plus what an expression
//! cannot say cheaply: a fixed suffix after the message (Claude Desktop's
//! ` { metadata: undefined }`) is cut off, and direction words become directions. The line
//! shapes come from the hosts' own logs, as pasted in public bug reports
//! (`tests/data/formats/README.md` cites each).

use std::sync::OnceLock;

use regex::bytes::Regex;
use rpcscan::Raw;

use super::extract::{Extract, Found, Place, Scratch, Skip};

/// One named log format.
#[derive(Debug)]
pub struct LogFormat {
    /// Its `--log-format` name.
    pub name: &'static str,
    /// Who writes it, and which files.
    pub title: &'static str,
    /// A line of it holding a message, or a typical line when it holds none.
    pub sample: &'static str,
    /// `false`: the host logs no JSON-RPC messages in this file (only its own lines); the
    /// format is there so that such a log is recognised and said to hold none.
    pub has_messages: bool,
    shape: Shape,
}

#[derive(Debug)]
enum Shape {
    /// Text lines.
    Text {
        /// The message line: groups `ts`, `dir`, and `msg` last (`(?<msg>.*)$`).
        message: Option<&'static str>,
        /// Bytes after the message that belong to the host's line, not to the message.
        suffix: Option<&'static [u8]>,
        /// The host's direction words (the `dir` group) → `c2s` or `s2c`.
        dirs: &'static [(&'static [u8], &'static [u8])],
        /// The host's own lines (message lines match it too).
        host: &'static str,
        /// Host lines that only this host writes: with message lines, what detection counts.
        signature: &'static str,
    },
    /// JSON records (one per line) holding the message as a string member.
    Json {
        /// The member holding the message text.
        msg: &'static str,
        /// The member holding the record's time.
        ts: &'static str,
        /// Members every record of this logger has, besides `msg` and `ts`, with a number.
        numbers: &'static [&'static str],
    },
    /// `rpcscan proxy --log` and `rpcscan gateway --log` files.
    Rpcscan,
}

/// Client to server, as pairing and the proxy's logs name it.
const C2S: &[u8] = b"c2s";
/// Server to client.
const S2C: &[u8] = b"s2c";

/// Every named format, in the order detection prefers them on a tie.
pub static FORMATS: [LogFormat; 6] = [
    LogFormat {
        name: "claude-desktop",
        title: "Claude Desktop: mcp-server-NAME.log and mcp.log",
        sample: r#"2025-07-12T05:51:44.601Z [chatlog] [info] Message from client: {"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"claude-ai","version":"0.1.0"}},"jsonrpc":"2.0","id":0} { metadata: undefined }"#,
        has_messages: true,
        shape: Shape::Text {
            // `[server] [level]` (mcp-server-NAME.log) or `[level] [server]` (mcp.log).
            message: Some(concat!(
                r"(?-u)^(?<ts>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z) ",
                r"\[(?-u:[^\]\n])*\] \[(?-u:[^\]\n])*\] ",
                r"Message from (?<dir>client|server): (?<msg>.*)$"
            )),
            suffix: Some(b" { metadata: undefined }"),
            dirs: &[(b"client", C2S), (b"server", S2C)],
            host: concat!(r"(?-u)^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z", r" \[(?-u:[^\]\n])*\] "),
            signature: concat!(
                r"(?-u)^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z (?:\[(?-u:[^\]\n])*\] ){1,2}",
                r"(?:Message from (?:client|server): |Initializing server\.\.\.|",
                r"Server started and connected successfully|Client transport closed|",
                r"Server transport closed|Using MCP server command: |",
                r"Attempting to connect to MCP server |Connected to MCP server )"
            ),
        },
    },
    LogFormat {
        name: "vscode",
        title: "VS Code: an MCP server's output channel (MCP: NAME)",
        sample: r#"2026-07-24 02:03:14.089 [debug] [editor -> server] {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"Visual Studio Code","version":"1.129.1"}}}"#,
        has_messages: true,
        shape: Shape::Text {
            message: Some(concat!(
                r"(?-u)^(?<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?) \[\w+\] ",
                r"\[(?<dir>editor -> server|server -> editor|Client Says|Server Says)\] ",
                r"(?<msg>.*)$"
            )),
            suffix: None,
            dirs: &[
                (b"editor -> server", C2S),
                (b"Client Says", C2S),
                (b"server -> editor", S2C),
                (b"Server Says", S2C),
            ],
            host: r"(?-u)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[(?:trace|debug|info|warning|error)\] ",
            signature: concat!(
                r"(?-u)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[\w+\] ",
                r"(?:\[(?:editor -> server|server -> editor|Client Says|Server Says)\] |",
                r"Connection state: |Starting server |Server command line: |Stopping server |",
                r"Discovered \d+ tools|Waiting for server to respond to `initialize` request)"
            ),
        },
    },
    LogFormat {
        name: "cursor",
        title: "Cursor: MCP Logs / Cursor MCP output channel (actions only, no messages)",
        sample: "2025-07-20 11:13:11.616 [info] user-sourcebot: Calling tool 'search_code' with toolCallId: tool_39a83c18",
        has_messages: false,
        shape: Shape::Text {
            message: None,
            suffix: None,
            dirs: &[],
            host: r"(?-u)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[(?:trace|debug|info|warning|error)\] ",
            signature: concat!(
                r"(?-u)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[\w+\] ",
                r"(?:\s*(?-u:[^:\s])*: )?(?:Handling \w+ action|getOrCreateClient|",
                r"Client error for command|Calling tool '|Successfully called tool '|",
                r"Connected to stdio server|Starting new stdio process|Reusing existing stdio client|",
                r"CreateClient completed|Storing stdio client|Client closed for command)"
            ),
        },
    },
    LogFormat {
        name: "inspector",
        title: "MCP Inspector: its proxy's console output (connections only, no messages)",
        sample: "Received POST message for sessionId 4e3a5105-0b28-4013-8b72-4de869ed342d",
        has_messages: false,
        shape: Shape::Text {
            message: None,
            suffix: None,
            dirs: &[],
            host: concat!(
                r"(?-u)^(?:New (?:STDIO|SSE|StreamableHttp) connection request|",
                r"Received (?:GET|POST|DELETE) message for sessionId |",
                r"Created (?:client|server|web app|StreamableHttp client) transport|",
                r"Query parameters: |STDIO transport: |Stdio transport: |Spawned stdio transport|",
                r"Connected MCP client to backing server transport|Set up MCP proxy|",
                r"Client <-> Proxy  ?sessionId: |Proxy  ?<-> Server sessionId: |",
                r"Transports removed for sessionId |Error from MCP server: |",
                r"Error from inspector client: |Connection refused\. Is the MCP server running\?|",
                r"New streamable-http connection|(?:\S+ )?Proxy server listening on )"
            ),
            signature: r"(?-u)^(?:Received (?:GET|POST|DELETE) message for sessionId |New (?:STDIO|SSE|StreamableHttp) connection request|Set up MCP proxy|Client <-> Proxy  ?sessionId: |(?:\S+ )?Proxy server listening on )",
        },
    },
    LogFormat {
        name: "pino",
        title: "pino (Node.js) JSON records, the message's JSON text in msg",
        sample: r#"{"level":30,"time":1764410400120,"pid":4242,"hostname":"build-7","msg":"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}"}"#,
        has_messages: true,
        shape: Shape::Json { msg: "msg", ts: "time", numbers: &["level", "time"] },
    },
    LogFormat {
        name: "rpcscan",
        title: "rpcscan proxy --log and rpcscan gateway --log",
        sample: r#"{"ts":"2026-12-01T10:00:00.000Z","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"tools/list"}}"#,
        has_messages: true,
        shape: Shape::Rpcscan,
    },
];

impl LogFormat {
    /// The format called `name`.
    pub fn named(name: &str) -> Option<&'static LogFormat> {
        FORMATS.iter().find(|f| f.name == name)
    }

    /// Every format's name, for an error message: `claude-desktop, vscode, ...`.
    pub fn names() -> String {
        FORMATS.iter().map(|f| f.name).collect::<Vec<_>>().join(", ")
    }

    /// The named format of `extract`, if it is one.
    pub fn of(extract: &Extract) -> Option<&'static LogFormat> {
        match extract {
            Extract::Named(named) => Some(named.format()),
            Extract::Fields { skip_dir: Some(_), .. } => LogFormat::named("rpcscan"),
            _ => None,
        }
    }

    /// The extraction that reads this format.
    pub fn extract(&'static self) -> Extract {
        match &self.shape {
            Shape::Rpcscan => Extract::proxy_log(),
            _ => Extract::Named(Box::new(Named::new(self))),
        }
    }

    /// What detection scores a line: 4 for a message line, 2 for a line only this host
    /// writes, 1 for one of the host's other lines, 0 for a line it does not recognise.
    fn score(&self, compiled: &Compiled, line: &[u8]) -> u32 {
        match &self.shape {
            Shape::Rpcscan => 4 * u32::from(Extract::is_proxy_log(line)),
            Shape::Json { msg, ts, numbers } => {
                let record = Raw::lenient(line);
                if !record.is_object() {
                    return 0;
                }
                let [m, t, a, b] = record.get_many([*msg, *ts, numbers[0], numbers[1]]);
                let number = |f: rpcscan::Field<'_>| {
                    f.unique().is_some_and(|v| v.as_bytes().first().is_some_and(u8::is_ascii_digit))
                };
                if !(number(a) && number(b) && t.unique().is_some()) {
                    return 0;
                }
                match m.unique().and_then(|v| v.as_str()) {
                    Some(text) if text.raw().first() == Some(&b'{') => 4,
                    Some(_) => 2,
                    None => 0,
                }
            }
            Shape::Text { .. } => {
                let (Some(signature), Some(host)) = (&compiled.signature, &compiled.host) else {
                    return 0;
                };
                if compiled.message.as_ref().is_some_and(|m| m.is_match(line)) {
                    4
                } else if signature.is_match(line) {
                    2
                } else {
                    u32::from(host.is_match(line))
                }
            }
        }
    }
}

/// A format's expressions for detection, compiled once.
struct Compiled {
    message: Option<Regex>,
    host: Option<Regex>,
    signature: Option<Regex>,
}

fn compiled() -> &'static [Compiled] {
    static COMPILED: OnceLock<Vec<Compiled>> = OnceLock::new();
    COMPILED.get_or_init(|| {
        FORMATS
            .iter()
            .map(|f| match &f.shape {
                Shape::Text { message, host, signature, .. } => Compiled {
                    message: message.and_then(|m| Regex::new(m).ok()),
                    host: Regex::new(host).ok(),
                    signature: Regex::new(signature).ok(),
                },
                _ => Compiled { message: None, host: None, signature: None },
            })
            .collect()
    })
}

/// Lines of an input's start looked at by [`detect`].
pub const DETECT_LINES: usize = 32;

/// The format of an input whose first bytes are `first`, judged on its first
/// [`DETECT_LINES`] non-blank lines: the format that recognises them best, when at least
/// one of them is a message line or a line only that host writes. `None`: none of them
/// (bare messages, or a log no format knows).
pub fn detect(first: &[u8]) -> Option<&'static LogFormat> {
    let lines = first
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .take(DETECT_LINES);
    let mut scores = [(0u32, 0u32); FORMATS.len()];
    let none = Compiled { message: None, host: None, signature: None };
    for line in lines {
        // A JSON record is no host's text line: bare messages and JSON logs are judged
        // without compiling the text formats' expressions.
        let json = line.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
        for (i, format) in FORMATS.iter().enumerate() {
            let compiled = match (&format.shape, json) {
                (Shape::Text { .. }, true) => continue,
                (Shape::Text { .. }, false) => compiled().get(i).unwrap_or(&none),
                _ => &none,
            };
            let s = format.score(compiled, line);
            scores[i].0 += s;
            scores[i].1 += u32::from(s >= 2);
        }
    }
    let mut best: Option<(usize, u32)> = None;
    for (i, &(score, strong)) in scores.iter().enumerate() {
        if strong > 0 && best.is_none_or(|(_, b)| score > b) {
            best = Some((i, score));
        }
    }
    best.and_then(|(i, _)| FORMATS.get(i))
}

/// A named format's extraction: the message line's (a `--line-format` or `--json-field`
/// extraction), and what it cannot say.
#[derive(Clone, Debug)]
pub struct Named {
    format: &'static LogFormat,
    /// The message lines' extraction; `None` for a host that logs no messages.
    inner: Option<Extract>,
    /// The host's own lines.
    host: Option<Regex>,
}

impl Named {
    fn new(format: &'static LogFormat) -> Named {
        let (inner, host) = match &format.shape {
            Shape::Text { message, host, .. } => (
                // The table's expressions are tested to compile (`every_format_compiles`).
                message.and_then(|m| Extract::regex(m).ok()),
                Regex::new(host).ok(),
            ),
            Shape::Json { msg, ts, .. } => (Extract::fields(msg, Some(ts), None).ok(), None),
            Shape::Rpcscan => (None, None),
        };
        Named { format, inner, host }
    }

    /// The format.
    pub fn format(&self) -> &'static LogFormat {
        self.format
    }

    /// The same, for a caller that reads only the messages.
    pub(super) fn messages_only(self) -> Named {
        Named { inner: self.inner.map(Extract::messages_only), ..self }
    }

    pub(super) fn scratch(&self) -> Scratch {
        self.inner.as_ref().map_or_else(Scratch::empty, Extract::scratch)
    }

    pub(super) fn line<'l>(
        &self,
        line: &'l [u8],
        scratch: &mut Scratch,
    ) -> Result<Found<'l>, Skip> {
        let found = match &self.inner {
            Some(inner) => inner.line(line, scratch),
            None => Err(Skip::NoMatch),
        };
        let mut found = match found {
            Ok(found) => found,
            Err(Skip::NoMatch) => {
                return Err(match &self.host {
                    Some(host) if host.is_match(line) => Skip::HostLine,
                    _ => Skip::NoMatch,
                });
            }
            // A JSON record without the message member is the logger's own record.
            Err(Skip::Missing) if matches!(self.format.shape, Shape::Json { .. }) => {
                return Err(Skip::HostLine)
            }
            Err(why) => return Err(why),
        };
        match (&self.format.shape, &mut found.place) {
            (Shape::Text { suffix: Some(suffix), .. }, Place::InLine { start, end })
                if line.get(*start..*end).is_some_and(|m| m.ends_with(suffix)) =>
            {
                *end -= suffix.len();
            }
            // Text that is not a JSON object or array is the logger's own message.
            (Shape::Json { .. }, Place::Decoded { .. }) => {
                let first = scratch.decoded.iter().find(|b| !b.is_ascii_whitespace());
                if !matches!(first, Some(b'{' | b'[')) {
                    return Err(Skip::HostLine);
                }
            }
            _ => {}
        }
        if let (Shape::Text { dirs, .. }, Some(dir)) = (&self.format.shape, found.dir) {
            found.dir = dirs.iter().find(|(word, _)| *word == dir).map(|(_, d)| *d).or(Some(dir));
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_compiles_and_reads_its_sample() {
        for format in &FORMATS {
            let c = &compiled()[FORMATS.iter().position(|f| f.name == format.name).unwrap()];
            if let Shape::Text { message, .. } = &format.shape {
                assert!(c.host.is_some() && c.signature.is_some(), "{}", format.name);
                assert_eq!(c.message.is_some(), message.is_some(), "{}", format.name);
            }
            let extract = format.extract();
            let mut scratch = extract.scratch();
            let found = extract.line(format.sample.as_bytes(), &mut scratch);
            assert_eq!(found.is_ok(), format.has_messages, "{}: {found:?}", format.name);
            if !format.has_messages {
                assert_eq!(found.unwrap_err(), Skip::HostLine, "{}", format.name);
            }
            assert_eq!(detect(format.sample.as_bytes()).map(|f| f.name), Some(format.name));
            assert!(LogFormat::named(format.name).is_some());
        }
    }

    /// A message line's place is found by the `--line-format` fast road: its prefix as a
    /// compiled DFA, no capture slots when only messages are read.
    #[test]
    fn message_lines_take_the_fast_road() {
        for format in
            FORMATS.iter().filter(|f| matches!(f.shape, Shape::Text { message: Some(_), .. }))
        {
            let Extract::Named(named) = format.extract() else { panic!("{}", format.name) };
            let Some(Extract::Regex { tail: Some(tail), .. }) = &named.inner else {
                panic!("{}: no fast road", format.name)
            };
            assert!(tail.has_dfa(), "{}", format.name);
        }
    }

    #[test]
    fn local_times_without_a_zone_are_read_as_utc() {
        let t = super::super::extract::parse_time(b"2025-03-23 16:38:00.970").unwrap();
        assert_eq!(t.as_millis(), 1_742_747_880_970);
    }

    #[test]
    fn bare_messages_and_plain_text_are_no_format() {
        for first in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#[..],
            b"2026-12-01T10:00:00.000Z [client] {\"jsonrpc\":\"2.0\"}\n",
            b"2025-05-25 20:50:27.070 [info] something else\n",
            b"hello\nworld\n",
            b"",
        ] {
            assert_eq!(detect(first).map(|f| f.name), None, "{:?}", String::from_utf8_lossy(first));
        }
    }

    #[test]
    fn claude_desktop_cuts_the_metadata_suffix_and_maps_directions() {
        let e = LogFormat::named("claude-desktop").unwrap().extract();
        let mut s = e.scratch();
        let line = br#"2025-07-12T05:51:44.601Z [x] [info] Message from server: {"id":1} { metadata: undefined }"#;
        let found = e.line(line, &mut s).unwrap();
        let Place::InLine { start, end } = found.place else { panic!() };
        assert_eq!(&line[start..end], br#"{"id":1}"#);
        assert_eq!(found.dir, Some(S2C));
        assert_eq!(found.ts, Some(&b"2025-07-12T05:51:44.601Z"[..]));
        // mcp.log: the level first, and no suffix.
        let line = br#"2025-03-12T17:53:14.656Z [info] [p] Message from client: {"id":0}"#;
        let found = e.line(line, &mut s).unwrap();
        let Place::InLine { start, end } = found.place else { panic!() };
        assert_eq!((&line[start..end], found.dir), (&br#"{"id":0}"#[..], Some(C2S)));
        let host = b"2025-07-12T05:51:44.599Z [x] [info] Server started and connected successfully";
        assert_eq!(e.line(host, &mut s).unwrap_err(), Skip::HostLine);
        assert_eq!(e.line(b"  metadata: {", &mut s).unwrap_err(), Skip::NoMatch);
    }

    #[test]
    fn pino_text_that_is_not_json_is_the_loggers_own() {
        let e = LogFormat::named("pino").unwrap().extract();
        let mut s = e.scratch();
        let own = br#"{"level":30,"time":1764410400120,"msg":"server started"}"#;
        assert_eq!(e.line(own, &mut s).unwrap_err(), Skip::HostLine);
        let none = br#"{"level":30,"time":1764410400120}"#;
        assert_eq!(e.line(none, &mut s).unwrap_err(), Skip::HostLine);
        assert_eq!(e.line(b"not json", &mut s).unwrap_err(), Skip::NoMatch);
        let line =
            br#"{"level":20,"time":1764410400120,"msg":"{\"jsonrpc\":\"2.0\",\"method\":\"m\"}"}"#;
        let found = e.line(line, &mut s).unwrap();
        assert_eq!(found.ts, Some(&b"1764410400120"[..]));
        assert_eq!(s.decoded, br#"{"jsonrpc":"2.0","method":"m"}"#);
    }
}
