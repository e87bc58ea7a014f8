//! The opt-in policy of `rpcscan proxy` and `rpcscan gateway`: which client methods and
//! tools reach the server.
//!
//! Without options everything is forwarded. `--allow-method`/`--deny-method` globs apply to
//! the decoded method of client requests and notifications; `--allow-tool`/`--deny-tool`
//! globs to the decoded `params.name` of `tools/call` requests. A deny wins over an allow.
//! The protocol's own methods ([`is_protocol`]) are never blocked: a client that cannot
//! `initialize`, `ping`, cancel or follow its tasks is broken, not restricted.

use std::borrow::Cow;

use rpcscan::{Kind, Message, Str};

use crate::glob::any;

/// Why a client message is not forwarded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Denial {
    /// The method is not allowed (answered -32601).
    Method,
    /// The tool is not allowed (answered -32602, as MCP answers an unknown tool).
    Tool(String),
    /// A tool policy is set and `params.name` is missing, duplicated, not a string, or
    /// not decodable: the server might read it otherwise than the policy did.
    NoToolName,
}

/// The four lists of globs.
#[derive(Clone, Debug, Default)]
pub struct Policy {
    /// `--allow-method`: only client methods matching one of these pass (when any is set).
    pub allow_methods: Vec<String>,
    /// `--deny-method`: client methods matching one of these are refused.
    pub deny_methods: Vec<String>,
    /// `--allow-tool`: only tools matching one of these are called (when any is set).
    pub allow_tools: Vec<String>,
    /// `--deny-tool`: tools matching one of these are refused.
    pub deny_tools: Vec<String>,
}

/// MCP's own plumbing: lifecycle, liveness, cancellation, progress, tasks, discovery.
pub fn is_protocol(method: &[u8]) -> bool {
    matches!(method, b"initialize" | b"ping" | b"server/discover" | b"subscriptions/listen")
        || method.starts_with(b"notifications/")
        || method.starts_with(b"tasks/")
}

/// A string's decoded text as bytes, for matching: its raw bytes as they are when they
/// hold no escape and only ASCII (the decoded text is then those very bytes: no UTF-8
/// validation per message), else decoded; `None` when it does not decode.
fn text<'a>(s: &Str<'a>) -> Option<Cow<'a, [u8]>> {
    if !s.has_escapes() && s.raw().is_ascii() {
        return Some(Cow::Borrowed(s.raw()));
    }
    Some(match s.decode().ok()? {
        Cow::Borrowed(text) => Cow::Borrowed(text.as_bytes()),
        Cow::Owned(text) => Cow::Owned(text.into_bytes()),
    })
}

impl Policy {
    /// `true` when no option was given (nothing to check).
    pub fn is_open(&self) -> bool {
        self.allow_methods.is_empty()
            && self.deny_methods.is_empty()
            && self.allow_tools.is_empty()
            && self.deny_tools.is_empty()
    }

    /// `true` when a tool rule was given: checks then read `params.name` of `tools/call`
    /// requests (a parser noting it, `Parser::note_params_name`, spares them a walk).
    pub fn has_tool_rules(&self) -> bool {
        !self.allow_tools.is_empty() || !self.deny_tools.is_empty()
    }

    /// Checks a client request or notification; `Ok` forwards it.
    pub fn check(&self, msg: &Message<'_>) -> Result<(), Denial> {
        // `params.name` as the scan noted it (`Mcp::tool_name` reads `_meta` too).
        self.check_with_tool(msg, || {
            (msg.kind() == Kind::Request).then(|| msg.params_name().as_str()).flatten()
        })
    }

    /// [`Policy::check`] with the tool name from the caller (asked for only when a tool
    /// rule applies), for a caller that has already found the MCP routing keys.
    pub fn check_with_tool<'a>(
        &self,
        msg: &Message<'a>,
        tool: impl FnOnce() -> Option<Str<'a>>,
    ) -> Result<(), Denial> {
        if self.is_open() {
            return Ok(());
        }
        // Decoded, so that `tools\/call` or `"\u0065vil"` cannot slip past a glob.
        let Some(method) = msg.method().and_then(|m| text(&m)) else {
            return Err(Denial::Method);
        };
        if is_protocol(&method) {
            return Ok(());
        }
        if (!self.allow_methods.is_empty() && !any(&self.allow_methods, &method))
            || any(&self.deny_methods, &method)
        {
            return Err(Denial::Method);
        }
        if *method != *b"tools/call" || (self.allow_tools.is_empty() && self.deny_tools.is_empty())
        {
            return Ok(());
        }
        let Some(tool) = tool().and_then(|t| text(&t)) else {
            return Err(Denial::NoToolName);
        };
        if (!self.allow_tools.is_empty() && !any(&self.allow_tools, &tool))
            || any(&self.deny_tools, &tool)
        {
            // Decoded text: valid UTF-8, so nothing is lost.
            return Err(Denial::Tool(String::from_utf8_lossy(&tool).into_owned()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(am: &[&str], dm: &[&str], at: &[&str], dt: &[&str]) -> Policy {
        let v = |l: &[&str]| l.iter().map(|s| s.to_string()).collect();
        Policy { allow_methods: v(am), deny_methods: v(dm), allow_tools: v(at), deny_tools: v(dt) }
    }

    fn check(p: &Policy, msg: &str) -> Result<(), Denial> {
        p.check(&rpcscan::parse(msg.as_bytes()).unwrap())
    }

    #[test]
    fn rules() {
        let call = |name: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{name}"}}}}"#
            )
        };
        let req = |m: &str| format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{m}"}}"#);
        let open = Policy::default();
        let tools_only = policy(&["tools/*"], &[], &[], &[]);
        let no_exec = policy(&[], &[], &[], &["exec*"]);
        let only_echo = policy(&[], &[], &["echo"], &[]);
        let deny_all = policy(&[], &["*"], &[], &["*"]);
        for (p, msg, want) in [
            (&open, req("anything"), Ok(())),
            (&tools_only, req("tools/list"), Ok(())),
            (&tools_only, req("resources/read"), Err(Denial::Method)),
            (&tools_only, req("initialize"), Ok(())),
            (&tools_only, req("tasks/result"), Ok(())),
            (&deny_all, req("tasks/get"), Ok(())),
            (&deny_all, req("ping"), Ok(())),
            (&deny_all, req("tools/list"), Err(Denial::Method)),
            (&no_exec, call("echo"), Ok(())),
            (&no_exec, call("exec_shell"), Err(Denial::Tool("exec_shell".into()))),
            (&no_exec, call(r"\u0065xec"), Err(Denial::Tool("exec".into()))),
            (&no_exec, req(r"tools\/call"), Err(Denial::NoToolName)),
            (&only_echo, call("echo"), Ok(())),
            (&only_echo, call("other"), Err(Denial::Tool("other".into()))),
            (&only_echo, call("écho"), Err(Denial::Tool("écho".into()))),
            (&no_exec, call("éxec"), Ok(())),
            (&only_echo, req("tools/list"), Ok(())),
            (
                &only_echo,
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","name":"x"}}"#.into(),
                Err(Denial::NoToolName),
            ),
            (&tools_only, r#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#.into(), Ok(())),
            (&tools_only, r#"{"jsonrpc":"2.0","method":"custom/note"}"#.into(), Err(Denial::Method)),
        ] {
            assert_eq!(check(p, &msg), want, "{msg}");
        }
    }
}
