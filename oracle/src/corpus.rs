//! Deterministic, realistic MCP traffic (NDJSON) for benchmarks, examples and soak tests.
//!
//! The stream is a sequence of MCP sessions as a stdio transcript would log them, both
//! directions interleaved: `initialize` and its result, `notifications/initialized`,
//! `tools/list`, `tools/call` with progress notifications, `resources/read`, `prompts/get`,
//! `ping`, server-initiated `sampling/createMessage` / `elicitation/create`, logging, and
//! error responses (-32601, -32602, -32603 with `data`, -32002). Sessions differ the way
//! real SDKs differ: key order, spacing, ASCII-escaped or raw UTF-8 text, integer, string,
//! UUID or > 2^53 ids. About 1% of lines are invalid on purpose (bad version, `null` request
//! id, truncated JSON, duplicate `id`). Same mix, size and seed: same bytes.
//!
//! ```
//! use rpcscan_oracle::corpus::{generate, Mix};
//!
//! let ndjson = generate(Mix::Small, 10_000, 42);
//! assert!(ndjson.len() >= 10_000 && ndjson.ends_with(b"\n"));
//! assert_eq!(ndjson, generate(Mix::Small, 10_000, 42));
//! ```

use std::collections::VecDeque;
use std::fmt::Write as _;

use crate::rng::Rng;

/// Which size profile to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mix {
    /// Chatty traffic: every message under 1.5 KB, about 400 bytes on average.
    Small,
    /// About 2 KB on average, with occasional ~50 KB results (file contents, big tool
    /// outputs) among the small messages.
    Mixed,
}

/// Largest message [`Mix::Small`] produces (exclusive).
pub const SMALL_MAX: usize = 1500;

/// The lines that are one strict JSON text each (all that unchecked parsers are defined on,
/// so comparisons with them use this subset), and their size counting one newline each.
pub fn valid_json_lines<'a>(lines: &[&'a [u8]]) -> (Vec<&'a [u8]>, usize) {
    let valid: Vec<&[u8]> = lines.iter().copied().filter(|l| crate::validate_json(l)).collect();
    let bytes = valid.iter().map(|l| l.len() + 1).sum();
    (valid, bytes)
}

/// NDJSON: whole `\n`-terminated messages until at least `target_bytes` are written (the
/// last message may overshoot).
pub fn generate(mix: Mix, target_bytes: usize, seed: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(target_bytes + 64 * 1024);
    let mut traffic = Traffic::new(mix, seed);
    while out.len() < target_bytes {
        out.extend_from_slice(&traffic.next_message());
        out.push(b'\n');
    }
    out
}

/// The same stream as [`generate`], one message per element, without the `\n`.
pub fn messages(mix: Mix, target_bytes: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut total = 0;
    let mut traffic = Traffic::new(mix, seed);
    while total < target_bytes {
        let message = traffic.next_message();
        total += message.len() + 1;
        out.push(message);
    }
    out
}

/// An endless stream of messages; [`generate`] and [`messages`] take a prefix of it.
#[derive(Debug, Clone)]
pub struct Traffic {
    rng: Rng,
    mix: Mix,
    session: Session,
    pending: VecDeque<Vec<u8>>,
}

impl Iterator for Traffic {
    type Item = Vec<u8>;

    fn next(&mut self) -> Option<Vec<u8>> {
        Some(self.next_message())
    }
}

impl Traffic {
    /// The stream for `mix` and `seed`.
    pub fn new(mix: Mix, seed: u64) -> Self {
        let mut rng = Rng::new(seed ^ 0x6d63_702d_7472_6166);
        let session = Session::new(&mut rng);
        let mut traffic = Traffic { rng, mix, session, pending: VecDeque::new() };
        traffic.handshake();
        traffic
    }

    /// The next message (no `\n`).
    pub fn next_message(&mut self) -> Vec<u8> {
        loop {
            if let Some(message) = self.pending.pop_front() {
                return message;
            }
            self.step();
        }
    }

    /// Queues one message, and now and then a broken variant of it right after.
    fn emit(&mut self, message: String) {
        if self.mix == Mix::Small && message.len() >= SMALL_MAX {
            return; // keeps the Small promise; the budgets below make it (almost) never happen
        }
        let broken = self.rng.per_mille(10).then(|| self.break_message(&message));
        self.pending.push_back(message.into_bytes());
        if let Some(broken) = broken {
            self.pending.push_back(broken);
        }
    }

    /// One of the invalid lines real gateways see.
    fn break_message(&mut self, message: &str) -> Vec<u8> {
        let st = self.session.style;
        match self.rng.below(4) {
            0 => message
                .replacen(
                    &st.member("jsonrpc", &st.string("2.0")),
                    &st.member("jsonrpc", "\"1.0\""),
                    1,
                )
                .into_bytes(),
            1 => {
                let params = st.object(&[("name", st.string("get_weather"))]);
                st.envelope(vec![
                    ("id", "null".to_owned()),
                    ("method", st.string("tools/call")),
                    ("params", params),
                ])
                .into_bytes()
            }
            2 => {
                let cut = self.rng.range(1, message.len().saturating_sub(1).max(1));
                message.as_bytes()[..cut].to_vec()
            }
            _ => {
                let id = self.session.next_id(&mut self.rng);
                let inner = st.envelope(vec![("method", st.string("ping"))]);
                // `{` + `"id":X,` + rest: a second id in front of the first one.
                let mut out = String::from("{");
                out.push_str(&st.member("id", &id));
                out.push_str(st.comma());
                out.push_str(&st.member("id", &self.session.next_id(&mut self.rng)));
                out.push_str(st.comma());
                out.push_str(&inner[1..]);
                out.into_bytes()
            }
        }
    }

    /// `initialize` → result → `notifications/initialized` (→ `tools/list`).
    fn handshake(&mut self) {
        let st = self.session.style;
        let id = self.session.next_id(&mut self.rng);
        let version = self.rng.pick(&["2025-06-18", "2025-03-26", "2025-11-25"]);
        let client = self.rng.pick(&[
            ("claude-ai", "Claude", "0.1.0"),
            ("cursor-vscode", "Cursor", "1.2.4"),
            ("mcp-inspector", "MCP Inspector", "0.16.2"),
            ("goose", "Goose", "1.0.29"),
        ]);
        let params = st.object(&[
            ("protocolVersion", st.string(version)),
            (
                "capabilities",
                st.object(&[
                    ("roots", st.object(&[("listChanged", "true".into())])),
                    ("sampling", "{}".into()),
                    ("elicitation", "{}".into()),
                ]),
            ),
            (
                "clientInfo",
                st.object(&[
                    ("name", st.string(client.0)),
                    ("title", st.string(client.1)),
                    ("version", st.string(client.2)),
                ]),
            ),
        ]);
        self.request(&id, "initialize", Some(params));
        let server = self.rng.pick(&[
            ("weather-server", "Weather Tools ☀️", "1.4.0"),
            ("filesystem", "Filesystem Access", "2025.7.1"),
            ("github", "GitHub MCP Server", "0.9.0"),
            ("postgres", "PostgreSQL", "0.6.2"),
        ]);
        let result = st.object(&[
            ("protocolVersion", st.string(version)),
            (
                "capabilities",
                st.object(&[
                    ("logging", "{}".into()),
                    ("prompts", st.object(&[("listChanged", "true".into())])),
                    (
                        "resources",
                        st.object(&[("subscribe", "true".into()), ("listChanged", "true".into())]),
                    ),
                    ("tools", st.object(&[("listChanged", "true".into())])),
                ]),
            ),
            (
                "serverInfo",
                st.object(&[
                    ("name", st.string(server.0)),
                    ("title", st.string(server.1)),
                    ("version", st.string(server.2)),
                ]),
            ),
            ("instructions", st.string(INSTRUCTIONS)),
        ]);
        self.result(&id, result);
        self.notification("notifications/initialized", None);
        if self.rng.percent(70) {
            self.tools_list();
        }
    }

    /// One exchange of a running session (or the start of the next session).
    fn step(&mut self) {
        self.session.steps_left = self.session.steps_left.saturating_sub(1);
        if self.session.steps_left == 0 {
            self.session = Session::new(&mut self.rng);
            self.handshake();
            return;
        }
        match self.rng.below(100) {
            0..=39 => self.tools_call(),
            40..=51 => self.resources_read(),
            52..=54 => self.resources_list(),
            55..=60 => self.prompts_get(),
            61..=62 => self.prompts_list(),
            63..=70 => self.ping(),
            71..=73 => self.tools_list(),
            74..=78 => self.log_message(),
            79..=80 => self.cancelled(),
            81..=83 => self.resource_updated(),
            84..=85 => self.sampling(),
            86..=87 => self.elicitation(),
            88 => self.roots_list(),
            89..=92 => self.unknown_method(),
            93..=94 => self.internal_error(),
            95..=96 => self.input_required(),
            _ => self.notification("notifications/tools/list_changed", None),
        }
    }

    // --- envelopes -------------------------------------------------------------------

    fn request(&mut self, id: &str, method: &str, params: Option<String>) {
        let st = self.session.style;
        let mut members = vec![("id", id.to_owned()), ("method", st.string(method))];
        if let Some(params) = params {
            members.push(("params", params));
        }
        self.emit(st.envelope(members));
    }

    fn notification(&mut self, method: &str, params: Option<String>) {
        let st = self.session.style;
        let mut members = vec![("method", st.string(method))];
        if let Some(params) = params {
            members.push(("params", params));
        }
        self.emit(st.envelope(members));
    }

    fn result(&mut self, id: &str, result: String) {
        let st = self.session.style;
        self.emit(st.envelope(vec![("id", id.to_owned()), ("result", result)]));
    }

    fn error(&mut self, id: &str, code: i64, message: &str, data: Option<String>) {
        let st = self.session.style;
        let mut error = vec![("code", code.to_string()), ("message", st.string(message))];
        if let Some(data) = data {
            error.push(("data", data));
        }
        let error = st.object(&error);
        self.emit(st.envelope(vec![("id", id.to_owned()), ("error", error)]));
    }

    // --- exchanges -------------------------------------------------------------------

    fn tools_list(&mut self) {
        let st = self.session.style;
        let id = self.session.next_id(&mut self.rng);
        self.request(&id, "tools/list", None);
        let count = match self.mix {
            Mix::Small => self.rng.range(1, 2),
            Mix::Mixed => self.rng.range(3, TOOLS.len()),
        };
        let start = self.rng.below(TOOLS.len());
        let tools: Vec<String> =
            (0..count).map(|i| TOOLS[(start + i) % TOOLS.len()].describe(st)).collect();
        let mut result = vec![("tools", st.array(&tools))];
        if self.rng.percent(20) {
            result.push(("nextCursor", st.string(&uuid(&mut self.rng))));
        }
        self.result(&id, st.object(&result));
    }

    fn tools_call(&mut self) {
        let st = self.session.style;
        let tool = self.rng.pick(TOOLS);
        let id = self.session.next_id(&mut self.rng);
        let token =
            self.rng.percent(30).then(|| st.string(&format!("tok-{}", self.rng.below(100_000))));
        let mut params =
            vec![("name", st.string(tool.name)), ("arguments", tool.arguments(st, &mut self.rng))];
        if let Some(token) = &token {
            params.push(("_meta", st.object(&[("progressToken", token.clone())])));
        }
        self.request(&id, "tools/call", Some(st.object(&params)));
        if let Some(token) = &token {
            let total = 100;
            for step in 1..=self.rng.range(1, 2) {
                let note = st.object(&[
                    ("progressToken", token.clone()),
                    ("progress", (step * 30).to_string()),
                    ("total", total.to_string()),
                    ("message", st.string(self.rng.pick(PROGRESS))),
                ]);
                self.notification("notifications/progress", Some(note));
            }
        }
        match self.rng.below(100) {
            0..=3 => {
                let message = format!("Unknown tool: {}_v2", tool.name);
                self.error(&id, -32602, &message, None);
            }
            4..=7 => {
                let text = st.string(&format!(
                    "Failed to run {}: rate limit exceeded, retry in 30 s",
                    tool.name
                ));
                let content =
                    st.array(&[st.object(&[("type", st.string("text")), ("text", text)])]);
                self.result(&id, st.object(&[("content", content), ("isError", "true".into())]));
            }
            _ => {
                let len = self.text_len(400, 1300);
                let text = prose(&mut self.rng, len);
                let text = self.body(&text);
                let mut content = vec![st.object(&[("type", st.string("text")), ("text", text)])];
                let mut result = Vec::new();
                if self.rng.percent(15) {
                    // Structured output whose objects carry a `method` member: nested
                    // objects never count as envelope keys.
                    let calls = st.array(&[st.object(&[
                        ("method", st.string("tools/call")),
                        ("id", self.rng.below(1000).to_string()),
                        ("durationMs", self.rng.below(5000).to_string()),
                    ])]);
                    result.push(("structuredContent", st.object(&[("calls", calls)])));
                }
                if self.rng.percent(10) {
                    content.push(st.object(&[
                        ("type", st.string("resource_link")),
                        ("uri", st.string(&self.file_uri())),
                        ("name", st.string("report.md")),
                        ("mimeType", st.string("text/markdown")),
                    ]));
                }
                result.insert(0, ("content", st.array(&content)));
                result.push(("isError", "false".into()));
                self.result(&id, st.object(&result));
            }
        }
    }

    fn resources_read(&mut self) {
        let st = self.session.style;
        let id = self.session.next_id(&mut self.rng);
        let uri = self.file_uri();
        self.request(&id, "resources/read", Some(st.object(&[("uri", st.string(&uri))])));
        if self.rng.percent(6) {
            let data = st.object(&[("uri", st.string(&uri))]);
            self.error(&id, -32002, "Resource not found", Some(data));
            return;
        }
        let len = self.text_len(400, 1300);
        let text = code(&mut self.rng, len);
        let content = st.object(&[
            ("uri", st.string(&uri)),
            ("name", st.string(uri.rsplit('/').next().unwrap_or("file"))),
            ("mimeType", st.string("text/x-rust")),
            ("text", self.body(&text)),
        ]);
        self.result(&id, st.object(&[("contents", st.array(&[content]))]));
    }

    fn resources_list(&mut self) {
        let st = self.session.style;
        let id = self.session.next_id(&mut self.rng);
        self.request(&id, "resources/list", None);
        let resources: Vec<String> = (0..self.rng.range(1, 3))
            .map(|_| {
                let uri = self.file_uri();
                st.object(&[
                    ("uri", st.string(&uri)),
                    ("name", st.string(uri.rsplit('/').next().unwrap_or("file"))),
                    ("mimeType", st.string("text/plain")),
                ])
            })
            .collect();
        self.result(&id, st.object(&[("resources", st.array(&resources))]));
    }

    fn prompts_get(&mut self) {
        let st = self.session.style;
        let id = self.session.next_id(&mut self.rng);
        let snippet = code(&mut self.rng, 120);
        let params = st.object(&[
            ("name", st.string("code_review")),
            ("arguments", st.object(&[("code", st.string(&snippet))])),
        ]);
        self.request(&id, "prompts/get", Some(params));
        let text = format!("Please review this code:\n{snippet}");
        let message = st.object(&[
            ("role", st.string("user")),
            ("content", st.object(&[("type", st.string("text")), ("text", st.string(&text))])),
        ]);
        let result = st.object(&[
            ("description", st.string("Code review prompt")),
            ("messages", st.array(&[message])),
        ]);
        self.result(&id, result);
    }

    fn prompts_list(&mut self) {
        let st = self.session.style;
        let id = self.session.next_id(&mut self.rng);
        self.request(&id, "prompts/list", None);
        let argument = st.object(&[
            ("name", st.string("code")),
            ("description", st.string("The code to review")),
            ("required", "true".into()),
        ]);
        let prompt = st.object(&[
            ("name", st.string("code_review")),
            ("title", st.string("Request Code Review")),
            (
                "description",
                st.string("Asks the LLM to analyze code quality and suggest improvements"),
            ),
            ("arguments", st.array(&[argument])),
        ]);
        self.result(&id, st.object(&[("prompts", st.array(&[prompt]))]));
    }

    fn ping(&mut self) {
        let id = st_string_id(&mut self.rng, &mut self.session);
        self.request(&id, "ping", None);
        self.result(&id, "{}".into());
    }

    fn log_message(&mut self) {
        let st = self.session.style;
        let level = self.rng.pick(&["debug", "info", "warning", "error"]);
        let data = st.object(&[
            ("error", st.string("Connection failed")),
            ("details", st.object(&[("host", st.string("localhost")), ("port", "5432".into())])),
        ]);
        let params = st.object(&[
            ("level", st.string(level)),
            ("logger", st.string("database")),
            ("data", data),
        ]);
        self.notification("notifications/message", Some(params));
    }

    fn cancelled(&mut self) {
        let st = self.session.style;
        let params = st.object(&[
            ("requestId", self.session.last_id.clone()),
            ("reason", st.string("User requested cancellation")),
        ]);
        self.notification("notifications/cancelled", Some(params));
    }

    fn resource_updated(&mut self) {
        let st = self.session.style;
        let uri = self.file_uri();
        let params = st.object(&[("uri", st.string(&uri)), ("title", st.string("Project file"))]);
        self.notification("notifications/resources/updated", Some(params));
    }

    fn sampling(&mut self) {
        let st = self.session.style;
        let id = self.session.next_server_id();
        let question = st.string(self.rng.pick(QUESTIONS));
        let message = st.object(&[
            ("role", st.string("user")),
            ("content", st.object(&[("type", st.string("text")), ("text", question)])),
        ]);
        let hints = st.array(&[st.object(&[("name", st.string("claude-3-sonnet"))])]);
        let params = st.object(&[
            ("messages", st.array(&[message])),
            (
                "modelPreferences",
                st.object(&[
                    ("hints", hints),
                    ("intelligencePriority", "0.8".into()),
                    ("speedPriority", "0.5".into()),
                ]),
            ),
            ("systemPrompt", st.string("You are a helpful assistant.")),
            ("maxTokens", "100".into()),
        ]);
        self.request(&id, "sampling/createMessage", Some(params));
        let len = self.text_len(150, 900);
        let answer = prose(&mut self.rng, len);
        let answer = self.body(&answer);
        let result = st.object(&[
            ("role", st.string("assistant")),
            ("content", st.object(&[("type", st.string("text")), ("text", answer)])),
            ("model", st.string("claude-3-sonnet-20240307")),
            ("stopReason", st.string("endTurn")),
        ]);
        self.result(&id, result);
    }

    fn elicitation(&mut self) {
        let st = self.session.style;
        let id = self.session.next_server_id();
        let schema = st.object(&[
            ("type", st.string("object")),
            (
                "properties",
                st.object(&[(
                    "name",
                    st.object(&[
                        ("type", st.string("string")),
                        ("description", st.string("Your GitHub username")),
                    ]),
                )]),
            ),
            ("required", st.array(&[st.string("name")])),
        ]);
        let params = st.object(&[
            ("message", st.string("Please provide your GitHub username")),
            ("requestedSchema", schema),
        ]);
        self.request(&id, "elicitation/create", Some(params));
        let action = self.rng.pick(&["accept", "decline", "cancel"]);
        let mut result = vec![("action", st.string(action))];
        if action == "accept" {
            result.push(("content", st.object(&[("name", st.string("octocat"))])));
        }
        self.result(&id, st.object(&result));
    }

    fn roots_list(&mut self) {
        let st = self.session.style;
        let id = self.session.next_server_id();
        self.request(&id, "roots/list", None);
        let root = st.object(&[
            ("uri", st.string("file:///home/user/projects/myproject")),
            ("name", st.string("My Project")),
        ]);
        self.result(&id, st.object(&[("roots", st.array(&[root]))]));
    }

    fn unknown_method(&mut self) {
        let id = self.session.next_id(&mut self.rng);
        let method = self.rng.pick(&[
            "resources/templates/list",
            "completion/complete",
            "tasks/get",
            "foobar",
        ]);
        self.request(&id, method, Some("{}".into()));
        self.error(&id, -32601, "Method not found", None);
    }

    fn internal_error(&mut self) {
        let st = self.session.style;
        let id = self.session.next_id(&mut self.rng);
        let query = st.string("SELECT * FROM \"orders\" WHERE total > 100");
        let params = st.object(&[
            ("name", st.string("run_sql")),
            ("arguments", st.object(&[("query", query)])),
        ]);
        self.request(&id, "tools/call", Some(params));
        let data = st.object(&[
            ("details", st.string("connection reset by peer (os error 104)")),
            ("retryable", "true".into()),
            ("trace", st.array(&[st.string("db::pool::get"), st.string("tools::run_sql")])),
        ]);
        self.error(&id, -32603, "Internal error", Some(data));
    }

    /// A multi-round-trip result (`resultType: "input_required"`) whose nested input
    /// requests carry `method` members.
    fn input_required(&mut self) {
        let st = self.session.style;
        let id = self.session.next_id(&mut self.rng);
        let params = st.object(&[
            ("name", st.string("create_issue")),
            ("arguments", st.object(&[("repo", st.string("octo/hello"))])),
        ]);
        self.request(&id, "tools/call", Some(params));
        let ask = st.object(&[
            ("method", st.string("elicitation/create")),
            ("params", st.object(&[("message", st.string("Which label should the issue get?"))])),
        ]);
        let result = st.object(&[
            ("resultType", st.string("input_required")),
            ("inputRequests", st.object(&[("label", ask)])),
        ]);
        self.result(&id, result);
    }

    // --- helpers ---------------------------------------------------------------------

    /// A text length for a response body: small, or now and then a ~50 KB one in
    /// [`Mix::Mixed`].
    /// A response body's string literal; in [`Mix::Small`] cut to at most 1050 bytes (as
    /// escaped) so the whole message stays under [`SMALL_MAX`].
    fn body(&self, text: &str) -> String {
        match self.mix {
            Mix::Small => self.session.style.string_within(text, 1050),
            Mix::Mixed => self.session.style.string(text),
        }
    }

    fn text_len(&mut self, lo: usize, hi: usize) -> usize {
        match self.mix {
            Mix::Small => self.rng.range(lo, hi),
            Mix::Mixed if self.rng.percent(9) => self.rng.range(35_000, 55_000),
            Mix::Mixed => self.rng.range(lo * 3, hi * 4),
        }
    }

    fn file_uri(&mut self) -> String {
        let dir = self.rng.pick(&["src", "src/scan", "tests", "docs", "examples"]);
        let file = self.rng.pick(&[
            "main.rs",
            "lib.rs",
            "parser.rs",
            "README.md",
            "notes café.md",
            "日本語.txt",
        ]);
        format!("file:///home/user/project/{dir}/{file}")
    }
}

/// Per-session habits: how this client's SDK writes JSON and its ids.
#[derive(Debug, Clone)]
struct Session {
    style: Style,
    ids: IdStyle,
    next: u64,
    next_server: u64,
    last_id: String,
    steps_left: usize,
}

#[derive(Debug, Clone, Copy)]
enum IdStyle {
    Counter,
    Prefixed,
    Uuid,
    Big,
}

impl Session {
    fn new(rng: &mut Rng) -> Self {
        let ids = match rng.below(20) {
            0..=10 => IdStyle::Counter,
            11..=13 => IdStyle::Prefixed,
            14..=16 => IdStyle::Uuid,
            _ => IdStyle::Big,
        };
        let next = match ids {
            IdStyle::Big => (1 << 53) + rng.below(1 << 20) as u64,
            _ => rng.below(2) as u64,
        };
        Session {
            style: Style {
                spaced: rng.percent(25),
                ascii: rng.percent(30),
                method_first: rng.percent(40),
            },
            ids,
            next,
            next_server: 0,
            last_id: "0".into(),
            steps_left: rng.range(20, 120),
        }
    }

    /// The next client request id, as JSON text.
    fn next_id(&mut self, rng: &mut Rng) -> String {
        let n = self.next;
        self.next += 1;
        let id = match self.ids {
            IdStyle::Counter => n.to_string(),
            IdStyle::Prefixed => format!("\"req-{n}\""),
            IdStyle::Uuid => format!("\"{}\"", uuid(rng)),
            IdStyle::Big if rng.percent(10) => (u64::MAX - rng.below(1 << 30) as u64).to_string(),
            IdStyle::Big => n.to_string(),
        };
        self.last_id = id.clone();
        id
    }

    /// Server-initiated requests count on their own.
    fn next_server_id(&mut self) -> String {
        self.next_server += 1;
        self.next_server.to_string()
    }
}

/// `ping` ids are often strings, whatever the session uses otherwise.
fn st_string_id(rng: &mut Rng, session: &mut Session) -> String {
    if rng.percent(50) {
        format!("\"{}\"", rng.below(100_000))
    } else {
        session.next_id(rng)
    }
}

/// How one SDK serializes: separators, `\u` escaping of non-ASCII, envelope key order.
#[derive(Debug, Clone, Copy)]
struct Style {
    /// `", "` and `": "` (Python `json.dumps`) instead of compact separators.
    spaced: bool,
    /// Non-ASCII as `\uXXXX` (Python `ensure_ascii`).
    ascii: bool,
    /// `method`/`result` before `jsonrpc`/`id` (the TypeScript SDK's order).
    method_first: bool,
}

impl Style {
    fn comma(self) -> &'static str {
        if self.spaced {
            ", "
        } else {
            ","
        }
    }

    fn member(self, key: &str, value: &str) -> String {
        let colon = if self.spaced { ": " } else { ":" };
        format!("{}{colon}{value}", self.string(key))
    }

    fn object(self, members: &[(&str, String)]) -> String {
        let body: Vec<String> = members.iter().map(|(k, v)| self.member(k, v)).collect();
        format!("{{{}}}", body.join(self.comma()))
    }

    fn array(self, items: &[String]) -> String {
        format!("[{}]", items.join(self.comma()))
    }

    /// The top-level object: `jsonrpc` added, members ordered the way this SDK does.
    fn envelope(self, mut members: Vec<(&str, String)>) -> String {
        members.insert(0, ("jsonrpc", self.string("2.0")));
        if self.method_first {
            let (head, tail): (Vec<_>, Vec<_>) =
                members.into_iter().partition(|(key, _)| *key != "jsonrpc" && *key != "id");
            members = head;
            members.extend(tail);
        }
        self.object(&members)
    }

    /// A JSON string literal.
    fn string(self, text: &str) -> String {
        self.string_within(text, usize::MAX)
    }

    /// A JSON string literal of at most `max` bytes: the longest prefix of `text` that fits.
    fn string_within(self, text: &str, max: usize) -> String {
        let mut out = String::with_capacity(text.len().min(max) + 2);
        out.push('"');
        let mut escaped = String::new();
        for c in text.chars() {
            escaped.clear();
            match c {
                '"' => escaped.push_str("\\\""),
                '\\' => escaped.push_str("\\\\"),
                '\n' => escaped.push_str("\\n"),
                '\r' => escaped.push_str("\\r"),
                '\t' => escaped.push_str("\\t"),
                c if (c as u32) < 0x20 => {
                    let _ = write!(escaped, "\\u{:04x}", c as u32);
                }
                c if self.ascii && !c.is_ascii() => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        let _ = write!(escaped, "\\u{unit:04x}");
                    }
                }
                c => escaped.push(c),
            }
            if out.len() + escaped.len() + 1 > max {
                break;
            }
            out.push_str(&escaped);
        }
        out.push('"');
        out
    }
}

/// A tool a server advertises and clients call.
#[derive(Debug, Clone, Copy)]
struct Tool {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    /// (name, JSON type, description, required)
    args: &'static [(&'static str, &'static str, &'static str, bool)],
}

const TOOLS: &[Tool] = &[
    Tool {
        name: "get_weather",
        title: "Weather Information Provider",
        description: "Get current weather information for a location",
        args: &[
            ("location", "string", "City name or zip code", true),
            ("units", "string", "metric or imperial", false),
        ],
    },
    Tool {
        name: "search_files",
        title: "Search Files",
        description: "Search the project for files whose contents match a query",
        args: &[
            ("query", "string", "Text or regex to look for", true),
            ("max_results", "integer", "Upper bound on hits", false),
        ],
    },
    Tool {
        name: "run_sql",
        title: "Run SQL",
        description: "Run a read-only SQL query against the analytics database",
        args: &[("query", "string", "A single SELECT statement", true)],
    },
    Tool {
        name: "create_issue",
        title: "Create GitHub Issue",
        description: "Open an issue in a GitHub repository",
        args: &[
            ("repo", "string", "owner/name", true),
            ("title", "string", "Issue title", true),
            ("body", "string", "Markdown body", false),
            ("labels", "array", "Labels to apply", false),
        ],
    },
    Tool {
        name: "fetch_url",
        title: "Fetch URL",
        description: "Fetch a web page and return it as markdown",
        args: &[
            ("url", "string", "Absolute http(s) URL", true),
            ("max_length", "integer", "Truncate after this many characters", false),
        ],
    },
    Tool {
        name: "translate",
        title: "Translate Text",
        description: "Translate text between languages",
        args: &[
            ("text", "string", "Text to translate", true),
            ("target_lang", "string", "ISO 639-1 code", true),
        ],
    },
];

impl Tool {
    /// Its `tools/list` entry, JSON schema included.
    fn describe(self, st: Style) -> String {
        let properties: Vec<(&str, String)> = self
            .args
            .iter()
            .map(|(name, ty, description, _)| {
                let mut schema =
                    vec![("type", st.string(ty)), ("description", st.string(description))];
                if *ty == "array" {
                    schema.push(("items", st.object(&[("type", st.string("string"))])));
                }
                (*name, st.object(&schema))
            })
            .collect();
        let required: Vec<String> =
            self.args.iter().filter(|a| a.3).map(|a| st.string(a.0)).collect();
        let schema = st.object(&[
            ("type", st.string("object")),
            ("properties", st.object(&properties)),
            ("required", st.array(&required)),
        ]);
        st.object(&[
            ("name", st.string(self.name)),
            ("title", st.string(self.title)),
            ("description", st.string(self.description)),
            ("inputSchema", schema),
        ])
    }

    /// Plausible `arguments` for a call.
    fn arguments(self, st: Style, rng: &mut Rng) -> String {
        let mut members: Vec<(&str, String)> = Vec::new();
        for &(name, ty, _, required) in self.args {
            if !required && rng.percent(50) {
                continue;
            }
            let value = match ty {
                "integer" => rng.range(1, 500).to_string(),
                "array" => st.array(&[st.string("bug"), st.string("good first issue")]),
                _ if rng.percent(40) => {
                    let len = rng.range(40, 240);
                    st.string(&prose(rng, len))
                }
                _ => st.string(rng.pick(ARGUMENTS)),
            };
            members.push((name, value));
        }
        st.object(&members)
    }
}

const INSTRUCTIONS: &str = "Use the tools to answer questions about the user's files and \
    the weather. Prefer resources/read for large files.";

const ARGUMENTS: &[&str] = &[
    "New York",
    "München",
    "東京",
    "SELECT count(*) FROM orders WHERE status = 'open'",
    "fn main\\(\\)",
    "https://example.com/docs?page=2&lang=en",
    "Crash when the \"id\" is 2^64",
    "Bonjour, ça va ? 👋",
];

const PROGRESS: &[&str] =
    &["Reticulating splines...", "Indexing files", "Waiting for the database", "Almost done ✅"];

const QUESTIONS: &[&str] = &[
    "What is the capital of France?",
    "Summarize the attached log in one sentence.",
    "Translate «bonne journée» to Japanese.",
];

const WORDS: &[&str] = &[
    "the",
    "weather",
    "in",
    "New York",
    "is",
    "72°F",
    "and",
    "partly",
    "cloudy",
    "found",
    "3",
    "matches",
    "file",
    "query",
    "returned",
    "rows",
    "server",
    "request",
    "latency",
    "p99",
    "naïve",
    "café",
    "Grüße",
    "東京の天気は晴れです",
    "Привет",
    "¡Hola!",
    "🚀",
    "\"quoted\"",
    "C:\\Users\\dev",
    "tab\there",
    "line\nbreak",
    "≤",
    "→",
    "✓",
    "\u{2028}",
];

/// Text of about `len` bytes from a multilingual word list.
fn prose(rng: &mut Rng, len: usize) -> String {
    let mut out = String::with_capacity(len + 32);
    while out.len() < len {
        if !out.is_empty() {
            out.push(if rng.percent(8) { '\n' } else { ' ' });
        }
        out.push_str(rng.pick(WORDS));
    }
    out
}

const CODE: &[&str] = &[
    "fn main() {",
    "    println!(\"Hello, {}!\", name);",
    "    let path = \"C:\\\\temp\\\\out.txt\";",
    "\tif x < 10 && y > 2 { return Err(\"too small\".into()); }",
    "}",
    "// TODO: handle the \"id\": null case",
    "def hello():\n    print('world')",
    "SELECT id, name FROM users WHERE name LIKE '%ö%';",
    "    /* 日本語のコメント */",
    "",
];

/// Source-code-like text of about `len` bytes: quotes, backslashes, tabs and newlines.
fn code(rng: &mut Rng, len: usize) -> String {
    let mut out = String::with_capacity(len + 64);
    while out.len() < len {
        out.push_str(rng.pick(CODE));
        out.push('\n');
    }
    out
}

fn uuid(rng: &mut Rng) -> String {
    let a = rng.next_u64();
    let b = rng.next_u64();
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        0x8000 | (b >> 48) & 0x3fff,
        b & 0xffff_ffff_ffff
    )
}
