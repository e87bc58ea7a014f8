//! [`RoutingKeys`]: the MCP routing keys of a forwarded message, decoded once, in the
//! request's extensions beside its [`OwnedMessage`].

use std::fmt;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue};
use rpcscan::mcp::Mcp;
use rpcscan::{Kind, Message, OwnedMessage, Str};

const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
const MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");

/// What a router, a rate limiter or a log keys on, decoded: the layer inserts it into the
/// extensions of every POST it forwards, beside the [`OwnedMessage`] it was read from.
///
/// Each key is text as the peer meant it (`"get\u005fweather"` is `get_weather`), and
/// absent when the message does not carry it once as a string: a duplicated key (which
/// the layer rejects by default) or a name with a lone surrogate escape is never one of
/// its values. No copy is made of a key without escapes: it shares the body's bytes (or
/// the header's).
///
/// | key | from |
/// |---|---|
/// | [`method`](Self::method) | `method` (requests and notifications) |
/// | [`tool`](Self::tool) | `params.name` of a `tools/call` request |
/// | [`prompt`](Self::prompt) | `params.name` of a `prompts/get` request |
/// | [`resource_uri`](Self::resource_uri) | `params.uri` of a `resources/read`, `resources/subscribe` or `resources/unsubscribe` request |
/// | [`session_id`](Self::session_id) | the `Mcp-Session-Id` header |
/// | [`protocol_version`](Self::protocol_version) | `params._meta["io.modelcontextprotocol/protocolVersion"]`, else the `MCP-Protocol-Version` header |
///
/// ```
/// use bytes::Bytes;
/// use http::Request;
/// use rpcscan::OwnedMessage;
/// use rpcscan_tower::RoutingKeys;
///
/// let body = Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get\u005fweather"}}"#);
/// let request = Request::post("/mcp").header("mcp-session-id", "s-1").body(()).unwrap();
/// let keys = RoutingKeys::new(&OwnedMessage::try_from(body).unwrap(), request.headers());
/// assert_eq!(keys.method(), Some("tools/call"));
/// assert_eq!(keys.tool(), Some("get_weather"));
/// assert_eq!(keys.session_id(), Some("s-1"));
/// assert_eq!(keys.protocol_version(), None);
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct RoutingKeys {
    method: Option<Text>,
    tool: Option<Text>,
    prompt: Option<Text>,
    resource_uri: Option<Text>,
    session_id: Option<Text>,
    protocol_version: Option<Text>,
}

impl RoutingKeys {
    /// The keys of `message` with the request's `headers` (the layer finds them while it
    /// checks the message: a forwarded request has them already).
    pub fn new(message: &OwnedMessage, headers: &HeaderMap) -> Self {
        let msg = message.as_message();
        let (session, version) = (headers.get(SESSION_ID), headers.get(MCP_PROTOCOL_VERSION));
        RoutingKeys::found(message.bytes(), &msg, &msg.mcp(), session, version, false)
    }

    /// The keys of `msg` (read from `body`), from the routing keys and the headers
    /// (`Mcp-Session-Id`, `MCP-Protocol-Version`) the layer found. `strict`: the scanner
    /// checked the UTF-8 of every string (strict validation); it always checks the method's.
    pub(crate) fn found(
        body: &Bytes,
        msg: &Message<'_>,
        mcp: &Mcp<'_>,
        session: Option<&HeaderValue>,
        version: Option<&HeaderValue>,
        strict: bool,
    ) -> Self {
        let text = |s: Option<Str<'_>>| s.and_then(|s| Text::from_body(body, s, strict));
        let method = msg.method();
        // The one member a request's method names, found with one pass over the names.
        let (mut tool, mut prompt, mut resource_uri) = (None, None, None);
        if let (Kind::Request, Some(m)) = (msg.kind(), method) {
            if m == "tools/call" {
                tool = mcp.name().as_str();
            } else if m == "prompts/get" {
                prompt = mcp.name().as_str();
            } else if m == "resources/read"
                || m == "resources/subscribe"
                || m == "resources/unsubscribe"
            {
                resource_uri = mcp.uri().as_str();
            }
        }
        let protocol_version = match text(mcp.protocol_version().as_str()) {
            Some(version) => Some(version),
            None => Text::from_header(version),
        };
        RoutingKeys {
            method: method.and_then(|m| Text::from_body(body, m, true)),
            tool: text(tool),
            prompt: text(prompt),
            resource_uri: text(resource_uri),
            session_id: Text::from_header(session),
            protocol_version,
        }
    }

    /// The method of a request or notification.
    pub fn method(&self) -> Option<&str> {
        self.method.as_ref().map(Text::as_str)
    }

    /// The tool of a `tools/call` request.
    pub fn tool(&self) -> Option<&str> {
        self.tool.as_ref().map(Text::as_str)
    }

    /// The prompt of a `prompts/get` request.
    pub fn prompt(&self) -> Option<&str> {
        self.prompt.as_ref().map(Text::as_str)
    }

    /// The resource of a `resources/read`, `resources/subscribe` or `resources/unsubscribe`
    /// request.
    pub fn resource_uri(&self) -> Option<&str> {
        self.resource_uri.as_ref().map(Text::as_str)
    }

    /// The `Mcp-Session-Id` header, when it is visible ASCII.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_ref().map(Text::as_str)
    }

    /// The protocol version the request speaks: its `_meta`'s (MCP 2026-07-28), else its
    /// `MCP-Protocol-Version` header's.
    pub fn protocol_version(&self) -> Option<&str> {
        self.protocol_version.as_ref().map(Text::as_str)
    }

    /// The tool or the prompt: what the OpenTelemetry conventions put after the method in
    /// a span's name (`tools/call get_weather`).
    pub fn target(&self) -> Option<&str> {
        self.tool().or_else(|| self.prompt())
    }
}

impl fmt::Debug for RoutingKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RoutingKeys")
            .field("method", &self.method())
            .field("tool", &self.tool())
            .field("prompt", &self.prompt())
            .field("resource_uri", &self.resource_uri())
            .field("session_id", &self.session_id())
            .field("protocol_version", &self.protocol_version())
            .finish()
    }
}

/// Text known to be UTF-8, sharing the bytes it was found in when it needed no decoding.
#[derive(Clone, PartialEq, Eq)]
enum Text {
    Body(Bytes),
    Header(HeaderValue),
}

impl Text {
    /// `checked`: the scanner checked that `s` is UTF-8.
    fn from_body(body: &Bytes, s: Str<'_>, checked: bool) -> Option<Text> {
        let raw = s.raw();
        if s.has_escapes() {
            return s.decode().ok().map(|text| Text::Body(Bytes::from(text.into_owned())));
        }
        if !checked {
            std::str::from_utf8(raw).ok()?;
        }
        // `raw` lies inside `body` (the message was read from it): share it, else copy.
        let start = (raw.as_ptr() as usize).wrapping_sub(body.as_ptr() as usize);
        let shared = start.checked_add(raw.len()).filter(|&end| end <= body.len());
        Some(Text::Body(match shared {
            Some(end) => body.slice(start..end),
            None => Bytes::copy_from_slice(raw),
        }))
    }

    fn from_header(value: Option<&HeaderValue>) -> Option<Text> {
        value.filter(|v| v.to_str().is_ok()).cloned().map(Text::Header)
    }

    fn as_str(&self) -> &str {
        // UTF-8 by construction (checked here or by the scanner): checking again on short
        // keys is cheap, and needs no `unsafe`.
        match self {
            Text::Body(bytes) => std::str::from_utf8(bytes).unwrap_or_default(),
            Text::Header(value) => value.to_str().unwrap_or_default(),
        }
    }
}
