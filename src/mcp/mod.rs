//! MCP routing keys, read from a message without a full parse.
//!
//! [`Message::mcp`] walks the top level of `params` (or `result`) once, and `params._meta`
//! once if it is there, and keeps borrowed views of the members gateways route on:
//!
//! | accessor | member | used for |
//! |---|---|---|
//! | [`Mcp::name`] | `params.name` | `tools/call`, `prompts/get` (what `Mcp-Name` mirrors) |
//! | [`Mcp::uri`] | `params.uri` | `resources/read` (what `Mcp-Name` mirrors) |
//! | [`Mcp::protocol_version`] | `params._meta["io.modelcontextprotocol/protocolVersion"]` | what `MCP-Protocol-Version` mirrors |
//! | [`Mcp::progress_token`] | `params._meta.progressToken` | correlating `notifications/progress` |
//! | [`Mcp::result_type`] | `result.resultType` | `complete` (also when absent), `input_required`, ... |
//!
//! ```
//! let msg = rpcscan::parse(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Oslo"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":42}}}"#)?;
//! let mcp = msg.mcp();
//! assert!(mcp.tool_name().unwrap() == "get_weather");
//! assert!(mcp.protocol_version().as_str().unwrap() == "2026-07-28");
//! assert_eq!(mcp.progress_token().unique().unwrap().as_bytes(), b"42");
//! # Ok::<(), rpcscan::Invalid<'static>>(())
//! ```
//!
//! Every accessor returns a [`Field`], which keeps *missing*, *unique* and *duplicated*
//! apart: a routing key that appears twice (`"name"` and `"n\u0061me"`) is reported as
//! [`Field::Duplicate`] and never resolved to one of its values, because the hops behind a
//! gateway may not resolve it the same way. The typed shortcuts ([`Mcp::tool_name`], ...)
//! return `None` for it. A duplicated `_meta` makes both keys read from it `Duplicate`.
//!
//! [`McpHeaders`] checks the Streamable HTTP request headers (`Mcp-Method`, `Mcp-Name`,
//! `MCP-Protocol-Version`) against the body.

mod base64;
mod headers;

pub use headers::{
    decode_header_value, HeaderMismatch, HeaderValueError, McpHeader, McpHeaders, MismatchKind,
};

use crate::kind::Kind;
use crate::message::{Field, Message};
use crate::owned::OwnedMessage;
use crate::text::Str;

/// The `_meta` key of the request's protocol version (MCP 2026-07-28).
pub const PROTOCOL_VERSION_META_KEY: &str = "io.modelcontextprotocol/protocolVersion";

/// The MCP routing keys of one message: see the [module docs](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mcp<'a> {
    kind: Kind,
    method: Option<Str<'a>>,
    name: Field<'a>,
    uri: Field<'a>,
    meta: Field<'a>,
    protocol_version: Field<'a>,
    progress_token: Field<'a>,
    result_type: Field<'a>,
}

/// What kind of result a success response carries (`result.resultType`, MCP 2026-07-28).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResultType<'a> {
    /// `"complete"`, or no `resultType` member at all (results of servers speaking an
    /// earlier protocol version), or a result that is not an object.
    Complete,
    /// `"input_required"`: the result asks the client for input before a retry (MRTR).
    InputRequired,
    /// Any other string (`"task"`, ...).
    Other(Str<'a>),
    /// `resultType` appears twice, or is not a string.
    Ambiguous,
}

impl<'a> Message<'a> {
    /// The MCP routing keys of this message (one pass over `params` or `result`).
    ///
    /// ```
    /// use rpcscan::mcp::ResultType;
    /// let msg = rpcscan::parse(br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{}}}"#).unwrap();
    /// assert_eq!(msg.mcp().result_type(), Some(ResultType::InputRequired));
    /// ```
    pub fn mcp(&self) -> Mcp<'a> {
        let [name, uri, meta] = match self.params() {
            Some(params) => params.get_many(["name", "uri", "_meta"]),
            None => [Field::Missing; 3],
        };
        let [protocol_version, progress_token] = match meta {
            Field::Unique(meta) => meta.get_many([PROTOCOL_VERSION_META_KEY, "progressToken"]),
            Field::Duplicate => [Field::Duplicate; 2],
            Field::Missing => [Field::Missing; 2],
        };
        let result_type = match self.result() {
            Some(result) => result.get("resultType"),
            None => Field::Missing,
        };
        Mcp {
            kind: self.kind(),
            method: self.method(),
            name,
            uri,
            meta,
            protocol_version,
            progress_token,
            result_type,
        }
    }
}

impl OwnedMessage {
    /// See [`Message::mcp`].
    ///
    /// ```
    /// let msg = rpcscan::OwnedMessage::try_from(bytes::Bytes::from_static(
    ///     br#"{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///a"}}"#,
    /// ))
    /// .unwrap();
    /// assert!(msg.mcp().resource_uri().unwrap() == "file:///a");
    /// ```
    pub fn mcp(&self) -> Mcp<'_> {
        self.as_message().mcp()
    }
}

/// The body member `Mcp-Name` mirrors for `method`: `name` for `tools/call` and
/// `prompts/get`, `uri` for `resources/read`.
pub(crate) fn name_key(method: Str<'_>) -> Option<&'static str> {
    if method == "tools/call" || method == "prompts/get" {
        Some("name")
    } else if method == "resources/read" {
        Some("uri")
    } else {
        None
    }
}

impl<'a> Mcp<'a> {
    /// `params.name`.
    pub const fn name(&self) -> Field<'a> {
        self.name
    }

    /// `params.uri`.
    pub const fn uri(&self) -> Field<'a> {
        self.uri
    }

    /// `params._meta`.
    pub const fn meta(&self) -> Field<'a> {
        self.meta
    }

    /// `params._meta["io.modelcontextprotocol/protocolVersion"]` (raw: check
    /// [`Field::as_str`] for a string).
    pub const fn protocol_version(&self) -> Field<'a> {
        self.protocol_version
    }

    /// `params._meta.progressToken`, raw: a string or a number. [`crate::Raw::as_id`]
    /// gives it the id treatment (decoded equality, exact bytes).
    pub const fn progress_token(&self) -> Field<'a> {
        self.progress_token
    }

    /// The body value the `Mcp-Name` header mirrors: `params.name` for `tools/call` and
    /// `prompts/get`, `params.uri` for `resources/read` requests; `None` for any other
    /// message.
    ///
    /// ```
    /// let msg = rpcscan::parse(br#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"greet"}}"#).unwrap();
    /// assert!(msg.mcp().mcp_name().unwrap().as_str().unwrap() == "greet");
    /// let ping = rpcscan::parse(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap();
    /// assert!(ping.mcp().mcp_name().is_none());
    /// ```
    pub fn mcp_name(&self) -> Option<Field<'a>> {
        if self.kind != Kind::Request {
            return None;
        }
        match name_key(self.method?)? {
            "uri" => Some(self.uri),
            _ => Some(self.name),
        }
    }

    /// The tool of a `tools/call` request, when `params.name` is there once and a string.
    pub fn tool_name(&self) -> Option<Str<'a>> {
        self.named("tools/call", self.name)
    }

    /// The prompt of a `prompts/get` request, when `params.name` is there once and a string.
    pub fn prompt_name(&self) -> Option<Str<'a>> {
        self.named("prompts/get", self.name)
    }

    /// The resource of a `resources/read` request, when `params.uri` is there once and a
    /// string.
    pub fn resource_uri(&self) -> Option<Str<'a>> {
        self.named("resources/read", self.uri)
    }

    fn named(&self, method: &str, field: Field<'a>) -> Option<Str<'a>> {
        (self.kind == Kind::Request && self.method? == method).then(|| field.as_str()).flatten()
    }

    /// `result.resultType` of a success response; `None` for any other message. Absent
    /// means [`ResultType::Complete`] (MCP: results of earlier protocol versions).
    ///
    /// ```
    /// use rpcscan::mcp::ResultType;
    /// let old = rpcscan::parse(br#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#).unwrap();
    /// assert_eq!(old.mcp().result_type(), Some(ResultType::Complete));
    /// let task = rpcscan::parse(br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"task"}}"#).unwrap();
    /// assert!(matches!(task.mcp().result_type(), Some(ResultType::Other(t)) if t == "task"));
    /// ```
    pub fn result_type(&self) -> Option<ResultType<'a>> {
        if self.kind != Kind::Result {
            return None;
        }
        Some(match self.result_type {
            Field::Missing => ResultType::Complete,
            Field::Duplicate => ResultType::Ambiguous,
            Field::Unique(raw) => match raw.as_str() {
                Some(s) if s == "complete" => ResultType::Complete,
                Some(s) if s == "input_required" => ResultType::InputRequired,
                Some(s) => ResultType::Other(s),
                None => ResultType::Ambiguous,
            },
        })
    }
}
