//! The gateway toolkit property (`gateway` target): on any bytes, in both validation modes,
//! the APIs a gateway builds on never panic and tell the truth.
//!
//! | check | what it holds |
//! |---|---|
//! | [`rewrite`] | `write_with_id` splices exactly the new id (small, above 2^63, escaped string, `-0`, `""`) and nothing else; the result re-parses to the same kind, method and params/result/error bytes; `false` exactly for a message without an id, written untouched; `write_replacing` splices any value of the message and refuses a value of another buffer |
//! | [`correlation`] | `forward` then `restore` of a response carrying the downstream id gives back the client and the original id bytes; unknown, `null`, string-spelled and already restored ids restore to `None` writing nothing; `insert`, `get`, `remove`, `find`, `drain` and the lengths agree |
//! | [`owned`] | `OwnedMessage::parse` equals the borrowed parse: verdict, kind, every accessor and `*_bytes` twin; reason, code, offset, id and response of `OwnedInvalid` |
//! | [`lookups`] | `Raw::members`, `get`, `get_many`, `as_str`, `as_id` on `params`, `result`, `error`, `error.data` and their members equal the oracle's member lookup (missing, unique with its exact text, duplicate after unescaping) on strict-valid messages; never panic after an envelope parse |
//! | [`mcp`] | `Message::mcp` reads the members its docs name (`params.name`, `params.uri`, `params._meta`, its protocol version and progress token, `result.resultType`), and its typed shortcuts follow them |
//! | [`headers`] | headers that mirror the body (plain, and `Mcp-Name` always also as base64) pass `McpHeaders::check`; a changed or missing one fails on the right header; any header bytes never panic and fail with status 400 and the request's id |
//! | [`header_values`] | `decode_header_value` equals a reference decoder (plain printable ASCII, or canonical padded base64 of UTF-8), and a buffer as long as the value always suffices |

use bytes::Bytes;
use rpcscan::mcp::{
    decode_header_value, HeaderValueError, McpHeader, McpHeaders, MismatchKind, ResultType,
    PROTOCOL_VERSION_META_KEY,
};
use rpcscan::rewrite::{write_replacing, write_with_id, Correlation};
use rpcscan::{Field, Kind, Message, OwnedMessage, Parser, Raw};
use rpcscan_oracle as oracle;

use crate::check::{show, ENVELOPE, STRICT};

/// The ids `write_with_id` splices in: raw JSON, an integer literal or a quoted string (what
/// its docs allow; `null` is neither).
const NEW_IDS: [&[u8]; 5] = [b"7", b"18446744073709551615", br#""a\"b\u00e9""#, b"-0", br#""""#];

/// Keys looked up in every object besides its own: the MCP routing keys and the error's.
const KEYS: [&str; 8] = [
    "name",
    "uri",
    "_meta",
    "resultType",
    "progressToken",
    PROTOCOL_VERSION_META_KEY,
    "code",
    "data",
];

/// Property of the `gateway` target: every check of this module, on `data` parsed in both
/// modes (the oracle comparisons only where strict mode accepts, i.e. on JSON).
pub fn gateway(data: &[u8]) {
    for (parser, mode) in [(&STRICT, "strict"), (&ENVELOPE, "envelope")] {
        let borrowed = parser.parse(data);
        owned(parser, data, &borrowed, mode);
        if let Ok(msg) = &borrowed {
            rewrite(parser, msg, mode);
            correlation(parser, msg, mode);
            lookups(msg, mode == "strict");
            mcp(msg);
            headers(msg, data);
        }
    }
    header_values(data);
}

/// `part` (a sub-slice of `whole`) as its offset in `whole`.
fn offset_in(whole: &[u8], part: &[u8]) -> usize {
    let at = (part.as_ptr() as usize).wrapping_sub(whole.as_ptr() as usize);
    assert!(at + part.len() <= whole.len(), "slice outside its message");
    at
}

/// `whole` with `part` (a sub-slice of it) replaced by `with`.
fn spliced(whole: &[u8], part: &[u8], with: &[u8]) -> Vec<u8> {
    let at = offset_in(whole, part);
    [&whole[..at], with, &whole[at + part.len()..]].concat()
}

fn raw_bytes(raw: Option<Raw<'_>>) -> Option<&[u8]> {
    raw.map(|r| r.as_bytes())
}

/// What an id rewrite must leave as it was, by name: the raw method, params, result, error,
/// error.data, error.code and error.message.
fn parts<'a>(m: &Message<'a>) -> [(&'static str, Option<&'a [u8]>); 7] {
    [
        ("method", m.method().map(|s| s.raw())),
        ("params", raw_bytes(m.params())),
        ("result", raw_bytes(m.result())),
        ("error", raw_bytes(m.error())),
        ("error.data", raw_bytes(m.error_data())),
        ("error.code", m.error_code().map(|c| c.raw())),
        ("error.message", m.error_message().map(|s| s.raw())),
    ]
}

/// `write_with_id` and `write_replacing` on one valid message.
pub fn rewrite(parser: &Parser, msg: &Message<'_>, mode: &str) {
    let bytes = msg.as_bytes();
    for new_id in NEW_IDS {
        let mut out = Vec::new();
        let replaced = write_with_id(msg, new_id, &mut out);
        let Some(id) = msg.id() else {
            assert!(!replaced, "{mode}: replaced a missing id in {}", show(bytes));
            assert_eq!(out, bytes, "{mode}: not written untouched");
            continue;
        };
        assert!(replaced, "{mode}: id not replaced in {}", show(bytes));
        assert_eq!(
            show(&out),
            show(&spliced(bytes, id.raw(), new_id)),
            "{mode}: write_with_id spliced more than the id of {}",
            show(bytes)
        );
        let again = parser
            .parse(&out)
            .unwrap_or_else(|e| panic!("{mode}: rewritten {} is invalid ({e:?})", show(&out)));
        let what = || format!("{mode}: rewritten {} from {}", show(&out), show(bytes));
        assert_eq!(again.kind(), msg.kind(), "kind of {}", what());
        assert_eq!(again.id().map(|i| i.raw()), Some(new_id), "id of {}", what());
        for ((part, theirs), (_, ours)) in parts(&again).into_iter().zip(parts(msg)) {
            assert_eq!(theirs, ours, "{part} of {}", what());
        }
    }

    // Every value of the message (and the members of params/result/error) can be replaced.
    let mut values: Vec<Raw<'_>> = Vec::new();
    for raw in [msg.params(), msg.result(), msg.error(), msg.error_data()].into_iter().flatten() {
        values.push(raw);
        values.extend(raw.members().map(|(_, v)| v));
    }
    for at in values {
        let mut out = Vec::new();
        assert!(
            write_replacing(bytes, at, b"null", &mut out),
            "{mode}: write_replacing refused {} of {}",
            show(at.as_bytes()),
            show(bytes)
        );
        assert_eq!(offset_in(bytes, at.as_bytes()), at.offset(), "{mode}: Raw::offset");
        assert_eq!(out, spliced(bytes, at.as_bytes(), b"null"), "{mode}: write_replacing");
    }
    // A value of another copy of the message is not a part of this one.
    let copy = bytes.to_vec();
    if let Ok(other) = parser.parse(&copy) {
        for at in [other.params(), other.result(), other.error()].into_iter().flatten() {
            let mut out = Vec::new();
            assert!(
                !write_replacing(bytes, at, b"null", &mut out),
                "{mode}: write_replacing took a value of another buffer"
            );
            assert_eq!(out, bytes, "{mode}: refused write_replacing not untouched");
        }
    }
}

/// A success response carrying `id` (raw JSON).
fn response_with(id: &str) -> Vec<u8> {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#).into_bytes()
}

/// The id map: forward, restore, insert, get, remove, find, drain, lengths.
pub fn correlation(parser: &Parser, msg: &Message<'_>, mode: &str) {
    let bytes = msg.as_bytes();
    let shown = || format!("{mode}: {}", show(bytes));
    let mut table: Correlation<u32> = Correlation::new();
    let mut buf = Vec::new();
    let assigned = table.forward(7, msg, &mut buf);
    if msg.kind() != Kind::Request {
        assert_eq!(assigned, None, "forwarded a {:?}: {}", msg.kind(), shown());
        assert_eq!(buf, bytes, "non-request not written untouched: {}", shown());
        assert!(table.is_empty());
        assert_eq!(table.len(), 0);
    } else {
        let original = msg.id().expect("a request has an id");
        assert_eq!(assigned, Some(1), "first downstream id: {}", shown());
        let mut want = Vec::new();
        write_with_id(msg, b"1", &mut want);
        assert_eq!(buf, want, "forward wrote something else: {}", shown());
        assert_eq!(table.forward(7, msg, &mut Vec::new()), Some(2));
        assert_eq!(table.forward(8, msg, &mut Vec::new()), Some(3));
        assert_eq!(table.len(), 3);

        // find: by client and original id (decoded equality).
        let found = table.find(&7, &original).expect("find the client's request");
        assert_eq!(found.client(), &7);
        assert_eq!(found.original_id(), original.raw(), "find: {}", shown());
        let down = found.downstream_id().raw();
        assert!(down == b"1" || down == b"2", "find: downstream {}", show(down));
        let found = table.find(&8, &original).expect("find the other client's request");
        assert_eq!(found.downstream_id().raw(), b"3");
        assert!(table.find(&9, &original).is_none(), "find: unknown client");

        // restore: the response to downstream id 2 goes back to client 7 with the original id.
        let response = response_with("2");
        let response = parser.parse(&response).expect("a plain response");
        let pending = table.get(&response.id().unwrap()).expect("get id 2");
        assert_eq!(pending.original_id(), original.raw());
        assert_eq!(pending.downstream_id().raw(), b"2");
        let mut out = Vec::new();
        assert_eq!(table.restore(&response, &mut out), Some(7), "restore: {}", shown());
        let mut want = Vec::new();
        write_with_id(&response, original.raw(), &mut want);
        assert_eq!(out, want, "restore wrote something else: {}", shown());
        let restored = parser
            .parse(&out)
            .unwrap_or_else(|e| panic!("restored {} is invalid ({e:?})", show(&out)));
        assert_eq!(restored.kind(), Kind::Result);
        assert_eq!(restored.id().map(|i| i.raw()), Some(original.raw()));
        assert_eq!(table.len(), 2);
        assert!(table.get(&response.id().unwrap()).is_none(), "restored id still in flight");

        // Unknown, already restored, string-spelled and `null` ids restore to None, writing nothing.
        let unknown = [
            response_with("2"),
            response_with("4"),
            response_with("\"1\""),
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":""}}"#.to_vec(),
        ];
        for text in &unknown {
            let other = parser.parse(text).expect("a plain response");
            let mut out = Vec::new();
            assert_eq!(table.restore(&other, &mut out), None, "restored {}", show(text));
            assert!(out.is_empty(), "wrote on a failed restore");
        }
        // A request restores to None (not a response).
        assert_eq!(table.restore(msg, &mut Vec::new()), None);
        assert_eq!(table.len(), 2);

        // remove (the other client's request), then drain the last one.
        let three = response_with("3");
        let three = parser.parse(&three).expect("a plain response");
        let removed = table.remove(&three.id().unwrap()).expect("remove id 3");
        assert_eq!(removed.into_client(), 8);
        assert!(table.remove(&three.id().unwrap()).is_none());
        assert_eq!(table.len(), 1);
        let drained: Vec<_> = table.drain().collect();
        assert_eq!(drained.len(), 1);
        assert_eq!(drained[0].original_id(), original.raw());
        assert!(table.is_empty());
        assert_eq!(table.len(), 0);
    }

    // insert under the message's own id, then find it again by the same id.
    let Some(id) = msg.id() else { return };
    let mut table: Correlation<u8> = Correlation::new();
    let inserted = table.insert(id, 1, b"\"orig\"");
    if id.is_null() {
        assert_eq!(inserted, Err(1), "inserted a null id: {}", shown());
        assert!(table.is_empty());
        return;
    }
    assert_eq!(inserted, Ok(()), "insert: {}", shown());
    assert_eq!(table.insert(id, 2, b"0"), Err(2), "insert twice: {}", shown());
    assert_eq!(table.len(), 1);
    let pending = table.get(&id).expect("get the inserted id");
    assert_eq!(pending.client(), &1);
    assert_eq!(pending.original_id(), b"\"orig\"");
    assert_eq!(pending.downstream_id().raw(), id.raw());
    assert!(pending.downstream_id() == id);
    let _ = format!("{table:?}");
    if matches!(msg.kind(), Kind::Result | Kind::Error) {
        let mut out = Vec::new();
        assert_eq!(table.restore(msg, &mut out), Some(1), "restore by own id: {}", shown());
        assert_eq!(out, spliced(bytes, id.raw(), b"\"orig\""));
    } else {
        assert_eq!(table.restore(msg, &mut Vec::new()), None);
        assert!(table.remove(&id).is_some(), "remove: {}", shown());
        assert!(table.remove(&id).is_none());
    }
    assert!(table.is_empty());
    assert_eq!(table.len(), 0);
    assert_eq!(table.drain().count(), 0);
}

/// `OwnedMessage::parse` against the borrowed parse of the same bytes.
pub fn owned(
    parser: &Parser,
    data: &[u8],
    borrowed: &Result<Message<'_>, rpcscan::Invalid<'_>>,
    mode: &str,
) {
    let owned = OwnedMessage::parse(parser, Bytes::copy_from_slice(data));
    let shown = || format!("{mode}: {}", show(data));
    if *parser == STRICT {
        let again = OwnedMessage::try_from(Bytes::copy_from_slice(data));
        assert!(again == owned, "try_from differs from parse(strict): {}", shown());
    }
    match (borrowed, &owned) {
        (Ok(m), Ok(o)) => {
            assert!(o.clone() == *o);
            assert_eq!(o.as_bytes(), data);
            assert_eq!(&o.bytes()[..], data);
            assert_eq!(o.kind(), m.kind(), "owned kind: {}", shown());
            assert_eq!(o.as_message().kind(), m.kind());
            let id = m.id().map(|i| i.raw());
            assert_eq!(o.id().map(|i| i.raw()), id, "owned id: {}", shown());
            assert_eq!(o.id_bytes().as_deref(), id, "owned id_bytes: {}", shown());
            let method = m.method().map(|s| s.raw());
            assert_eq!(o.method().map(|s| s.raw()), method, "owned method: {}", shown());
            assert_eq!(o.method_bytes().as_deref(), method, "owned method_bytes: {}", shown());
            let views = [
                ("params", m.params(), o.params(), o.params_bytes()),
                ("result", m.result(), o.result(), o.result_bytes()),
                ("error", m.error(), o.error(), o.error_bytes()),
                ("error.data", m.error_data(), o.error_data(), o.error_data_bytes()),
            ];
            for (what, ours, theirs, shared) in views {
                assert_eq!(raw_bytes(theirs), raw_bytes(ours), "owned {what}: {}", shown());
                assert_eq!(theirs.map(|r| r.offset()), ours.map(|r| r.offset()));
                assert_eq!(shared.as_deref(), raw_bytes(ours), "{what}_bytes: {}", shown());
            }
            assert_eq!(
                o.error_code().map(|c| c.raw()),
                m.error_code().map(|c| c.raw()),
                "owned error code: {}",
                shown()
            );
            assert_eq!(
                o.error_message().map(|s| s.raw()),
                m.error_message().map(|s| s.raw()),
                "owned error message: {}",
                shown()
            );
            assert_eq!(o.mcp(), m.mcp(), "owned mcp: {}", shown());
            let _ = format!("{o:?}");
            assert_eq!(&Bytes::from(o.clone())[..], data);
            assert_eq!(o.clone().into_bytes(), data);
        }
        (Err(e), Err(o)) => {
            assert!(o.clone() == *o);
            assert_eq!(o.reason(), e.reason(), "owned reason: {}", shown());
            assert_eq!(o.code(), e.code(), "owned code: {}", shown());
            assert_eq!(o.offset(), e.offset(), "owned offset: {}", shown());
            let id = e.id().map(|i| i.raw());
            assert_eq!(o.id().map(|i| i.raw()), id, "owned recovered id: {}", shown());
            assert_eq!(o.id_bytes().as_deref(), id, "owned id_bytes: {}", shown());
            assert!(o.as_invalid() == *e, "as_invalid: {}", shown());
            assert_eq!(o.response().to_vec(), e.response().to_vec(), "response: {}", shown());
            assert_eq!(o.to_string(), e.to_string());
            let _ = format!("{o:?}");
            assert_eq!(&o.bytes()[..], data);
            assert_eq!(o.clone().into_bytes(), data);
        }
        (b, o) => panic!(
            "owned and borrowed verdicts differ ({:?} vs {:?}): {}",
            b.as_ref().map(|m| m.kind()).map_err(|e| e.reason()),
            o.as_ref().map(|m| m.kind()).map_err(|e| e.reason()),
            shown()
        ),
    }
}

/// The values looked into: `params`, `result`, `error`, `error.data`, and the members of each.
fn looked_into<'a>(msg: &Message<'a>) -> Vec<Raw<'a>> {
    let mut values = Vec::new();
    for raw in [msg.params(), msg.result(), msg.error(), msg.error_data()].into_iter().flatten() {
        values.push(raw);
        values.extend(raw.members().map(|(_, v)| v).take(64));
    }
    values
}

/// `Raw` lookups against the oracle's members (`json` when strict mode accepted the message,
/// so every value is JSON); without it only that they never panic and stay in the message.
pub fn lookups(msg: &Message<'_>, json: bool) {
    let bytes = msg.as_bytes();
    for raw in looked_into(msg) {
        let text = raw.as_bytes();
        assert_eq!(bytes.get(raw.offset()..raw.offset() + raw.len()), Some(text));
        let members: Vec<_> = raw.members().collect();
        for (key, value) in &members {
            assert_eq!(
                bytes.get(value.offset()..value.offset() + value.len()),
                Some(value.as_bytes()),
                "member offset in {}",
                show(bytes)
            );
            let _ = key.decode();
        }
        let own_keys: Vec<String> = members
            .iter()
            .filter_map(|(k, _)| k.decode().ok().map(|k| k.into_owned()))
            .take(16)
            .collect();
        let keys: Vec<&str> =
            KEYS.iter().copied().chain(own_keys.iter().map(String::as_str)).collect();
        let fields: Vec<Field<'_>> = keys.iter().map(|k| raw.get(k)).collect();
        let [a, b, c, d] = raw.get_many([KEYS[0], KEYS[1], KEYS[2], KEYS[3]]);
        assert_eq!([a, b, c, d], [fields[0], fields[1], fields[2], fields[3]], "get_many");
        if !raw.is_object() {
            assert!(members.is_empty(), "members of a non-object {}", show(text));
            assert!(fields.iter().all(|f| f.is_missing()), "get on a non-object");
        }
        let _ = raw.as_id();
        let _ = raw.as_str().map(|s| s.decode());
        if !json {
            continue;
        }
        let shown = || format!("{} in {}", show(text), show(bytes));
        let text = std::str::from_utf8(text).expect("a strict-valid message is UTF-8");
        assert_eq!(raw.is_string(), raw.as_str().is_some(), "as_str of {}", shown());
        if text.starts_with(['-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9']) {
            assert_eq!(
                raw.as_id().is_some(),
                oracle::json::is_integer(text),
                "as_id of a number {}",
                shown()
            );
        }
        let Some(theirs) = oracle::json::members(text) else {
            assert!(!raw.is_object(), "oracle: not an object {}", shown());
            continue;
        };
        assert!(raw.is_object(), "oracle: an object {}", shown());
        assert_eq!(members.len(), theirs.len(), "member count of {}", shown());
        for ((key, value), want) in members.iter().zip(&theirs) {
            assert_eq!(
                show(key.raw()),
                show(&want.raw_key.as_bytes()[1..want.raw_key.len() - 1]),
                "member key of {}",
                shown()
            );
            assert_eq!(
                show(value.as_bytes()),
                show(want.value.as_bytes()),
                "member of {}",
                shown()
            );
        }
        for (key, field) in keys.iter().zip(&fields) {
            let mut hits = theirs.iter().filter(|m| m.key().as_deref() == Some(*key));
            let want = match (hits.next(), hits.next()) {
                (None, _) => None,
                (Some(m), None) => Some(Some(m.value)),
                (Some(_), Some(_)) => Some(None),
            };
            let ours = match field {
                Field::Missing => None,
                Field::Unique(v) => Some(Some(std::str::from_utf8(v.as_bytes()).unwrap())),
                Field::Duplicate => Some(None),
            };
            assert_eq!(ours, want, "get({key:?}) on {}", shown());
        }
    }
}

/// `Message::mcp` reads the members its docs name, and the shortcuts follow them.
pub fn mcp(msg: &Message<'_>) {
    let mcp = msg.mcp();
    let shown = || show(msg.as_bytes());
    let [name, uri, meta] = match msg.params() {
        Some(params) => [params.get("name"), params.get("uri"), params.get("_meta")],
        None => [Field::Missing; 3],
    };
    assert_eq!((mcp.name(), mcp.uri(), mcp.meta()), (name, uri, meta), "mcp of {}", shown());
    let [version, token] = match meta {
        Field::Unique(m) => [m.get(PROTOCOL_VERSION_META_KEY), m.get("progressToken")],
        Field::Duplicate => [Field::Duplicate; 2],
        Field::Missing => [Field::Missing; 2],
    };
    assert_eq!(mcp.protocol_version(), version, "protocol version of {}", shown());
    assert_eq!(mcp.progress_token(), token, "progress token of {}", shown());
    let _ = mcp.progress_token().unique().map(|t| t.as_id());

    let request = msg.kind() == Kind::Request;
    let method = msg.method();
    let is = |m: &str| request && method.is_some_and(|s| s == m);
    let named = |m: &str, field: Field<'_>| {
        if is(m) {
            field.as_str().map(|s| s.raw().to_vec())
        } else {
            None
        }
    };
    let raw = |s: Option<rpcscan::Str<'_>>| s.map(|s| s.raw().to_vec());
    assert_eq!(raw(mcp.tool_name()), named("tools/call", name), "tool_name of {}", shown());
    assert_eq!(raw(mcp.prompt_name()), named("prompts/get", name), "prompt_name of {}", shown());
    assert_eq!(
        raw(mcp.resource_uri()),
        named("resources/read", uri),
        "resource_uri of {}",
        shown()
    );
    let mirrored = if is("tools/call") || is("prompts/get") {
        Some(name)
    } else if is("resources/read") {
        Some(uri)
    } else {
        None
    };
    assert_eq!(mcp.mcp_name(), mirrored, "mcp_name of {}", shown());

    let want = msg.result().map(|result| match result.get("resultType") {
        Field::Missing => ResultType::Complete,
        Field::Duplicate => ResultType::Ambiguous,
        Field::Unique(v) => match v.as_str() {
            None => ResultType::Ambiguous,
            Some(s) if s == "complete" => ResultType::Complete,
            Some(s) if s == "input_required" => ResultType::InputRequired,
            Some(s) => ResultType::Other(s),
        },
    });
    assert_eq!(mcp.result_type(), want, "result_type of {}", shown());
}

/// Printable ASCII without leading or trailing space: a header value that may travel plainly.
fn is_plain(value: &[u8]) -> bool {
    value.iter().all(|b| (0x20..=0x7E).contains(b))
        && value.first() != Some(&b' ')
        && value.last() != Some(&b' ')
}

/// A body string's decoded text, when it is UTF-8 (no lone surrogate escape).
fn decoded(s: Option<rpcscan::Str<'_>>) -> Option<String> {
    s?.decode().ok().map(|c| c.into_owned())
}

/// `McpHeaders::check` with headers that mirror the body, then with one of them wrong, then
/// with header values cut from the fuzzer's bytes.
pub fn headers(msg: &Message<'_>, data: &[u8]) {
    let mcp = msg.mcp();
    let shown = || show(msg.as_bytes());
    match msg.kind() {
        Kind::Result | Kind::Error => {
            let headers = McpHeaders::new().method(b"ping");
            fails(msg, headers, McpHeader::Method, MismatchKind::Unexpected, "on a response");
        }
        Kind::Notification if mcp.protocol_version().is_missing() => {
            assert!(McpHeaders::new().check(msg).is_ok(), "bare notification: {}", shown());
        }
        Kind::Request => request_headers(msg),
        _ => {}
    }

    // Any header bytes: never a panic; a failure is a 400 with the request's id.
    let third = data.len() / 3;
    let (m, rest) = data.split_at(third);
    let (n, v) = rest.split_at(third);
    for headers in [
        McpHeaders::new().method(m).name(n).protocol_version(v),
        McpHeaders::new().name(data),
        McpHeaders::new().protocol_version(data),
    ] {
        if let Err(e) = headers.check_with(msg, &mcp) {
            assert_eq!(e.http_status(), 400);
            assert_eq!(e.id().map(|i| i.raw()), msg.id().map(|i| i.raw()));
            assert!(!e.message().is_empty());
            let _ = (e.to_string(), e.response().to_vec(), e.header().to_string());
        }
    }
}

/// `headers` fail `check` on `header` with `kind`: status 400, the request's id.
fn fails(
    msg: &Message<'_>,
    headers: McpHeaders<'_>,
    header: McpHeader,
    kind: MismatchKind,
    what: &str,
) {
    let err = headers.check(msg).err();
    let got = err.as_ref().map(|e| (e.header(), e.kind()));
    assert_eq!(got, Some((header, kind)), "{what}: {}", show(msg.as_bytes()));
    if let Some(err) = err {
        assert_eq!(err.http_status(), 400);
        assert_eq!(err.id().map(|i| i.raw()), msg.id().map(|i| i.raw()));
        let _ = err.response().to_vec();
    }
}

/// The request part of [`headers`]: mirrored headers pass, a wrong or missing one fails.
fn request_headers(msg: &Message<'_>) {
    let mcp = msg.mcp();
    let shown = || show(msg.as_bytes());
    let Some(method) = decoded(msg.method()).filter(|m| is_plain(m.as_bytes())) else {
        return;
    };
    // The name: none needed, or the body's string (plain when it can be, and base64 always).
    let name = match mcp.mcp_name() {
        None => None,
        Some(field) => match field.as_str() {
            Some(s) => match decoded(Some(s)) {
                Some(text) => Some(text),
                None => return, // a lone surrogate: no header can carry it
            },
            None => {
                let headers = McpHeaders::new().method(method.as_bytes()).name(b"x");
                fails(
                    msg,
                    headers,
                    McpHeader::Name,
                    MismatchKind::BadBodyValue,
                    "name not a string",
                );
                return;
            }
        },
    };
    let version = match mcp.protocol_version() {
        Field::Missing => None,
        Field::Unique(v) => match decoded(v.as_str()).filter(|v| is_plain(v.as_bytes())) {
            Some(v) => Some(v),
            None => return,
        },
        Field::Duplicate => return,
    };
    let base = McpHeaders::new().method(method.as_bytes());
    let base = match &version {
        Some(v) => base.protocol_version(v.as_bytes()),
        None => base,
    };
    let encoded = name.as_ref().map(|n| base64_header(n.as_bytes()));
    let mut passing = vec![];
    match (&name, &encoded) {
        (Some(n), Some(e)) => {
            passing.push(base.name(e));
            if is_plain(n.as_bytes()) {
                passing.push(base.name(n.as_bytes()));
            }
        }
        _ => passing.push(base),
    }
    for headers in passing {
        let got = headers.check(msg).map_err(|e| (e.header(), e.kind()));
        assert_eq!(got, Ok(()), "mirrored headers on {}", shown());
    }

    // A wrong method, a missing method, a wrong name, a missing name, a wrong version.
    let other = format!("{method}x");
    let wrong = McpHeaders::new().method(other.as_bytes());
    fails(msg, wrong, McpHeader::Method, MismatchKind::Differs, "wrong Mcp-Method");
    fails(msg, McpHeaders::new(), McpHeader::Method, MismatchKind::Missing, "no Mcp-Method");
    // Headers with everything right, spoiled one at a time below.
    let mut full = base;
    if let Some(n) = &name {
        let wrong = base64_header(format!("{n}x").as_bytes());
        fails(msg, base.name(&wrong), McpHeader::Name, MismatchKind::Differs, "wrong Mcp-Name");
        fails(msg, base, McpHeader::Name, MismatchKind::Missing, "no Mcp-Name");
        full = base.name(encoded.as_ref().unwrap());
    }
    if let Some(v) = &version {
        let wrong = format!("{v}x");
        fails(
            msg,
            full.protocol_version(wrong.as_bytes()),
            McpHeader::ProtocolVersion,
            MismatchKind::Differs,
            "wrong version",
        );
        // Without a name in the body (else the missing Mcp-Name is reported first).
        if name.is_none() {
            let without = McpHeaders::new().method(method.as_bytes());
            fails(msg, without, McpHeader::ProtocolVersion, MismatchKind::Missing, "no version");
        }
    }
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// RFC 4648 base64, standard alphabet, padded.
fn base64_encode(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> shift) & 63) as usize]);
            } else {
                out.push(b'=');
            }
        }
    }
    out
}

/// `=?base64?{base64 of data}?=`.
fn base64_header(data: &[u8]) -> Vec<u8> {
    [&b"=?base64?"[..], &base64_encode(data), b"?="].concat()
}

/// The reference decoder: the bytes of canonical padded base64 (the one text that
/// re-encodes to itself), `None` for anything else.
fn base64_decode(text: &[u8]) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(4) {
        return None;
    }
    let pads = text.iter().rev().take_while(|&&c| c == b'=').count();
    if pads > 2 {
        return None;
    }
    let body = &text[..text.len() - pads];
    let mut bits = 0u32;
    let mut nbits = 0;
    let mut out = Vec::new();
    for &c in body {
        let v = ALPHABET.iter().position(|&a| a == c)? as u32;
        bits = (bits << 6) | v;
        nbits += 6;
        if nbits >= 8 {
            nbits -= 8;
            out.push((bits >> nbits) as u8);
            bits &= (1 << nbits) - 1;
        }
    }
    (base64_encode(&out) == text).then_some(out)
}

/// `decode_header_value` on header values made of the fuzzer's bytes, against the
/// reference: plain printable ASCII as it is, the `=?base64?...?=` form decoded when its
/// payload is canonical padded base64 of UTF-8.
pub fn header_values(data: &[u8]) {
    let wrapped = |payload: &[u8]| [&b"=?base64?"[..], payload, b"?="].concat();
    let encoded = base64_encode(data);
    let values = [
        data.to_vec(),
        wrapped(data),
        base64_header(data),
        wrapped(encoded.get(1..).unwrap_or_default()),
    ];
    for value in &values {
        let payload = value.strip_prefix(b"=?base64?").and_then(|v| v.strip_suffix(b"?="));
        let want: Result<Vec<u8>, HeaderValueError> = match payload {
            Some(payload) => match base64_decode(payload) {
                Some(bytes) if std::str::from_utf8(&bytes).is_ok() => Ok(bytes),
                _ => Err(HeaderValueError::BadBase64),
            },
            None if is_plain(value) => Ok(value.clone()),
            None => Err(HeaderValueError::InvalidCharacters),
        };
        let mut out = vec![0u8; value.len()];
        let got = decode_header_value(value, &mut out).map(<[u8]>::to_vec);
        assert_eq!(got, want, "decode_header_value({})", show(value));
        if let Err(e) = &got {
            let _ = e.to_string();
        }
        // Too small a buffer: asked for exactly the decoded length.
        let mut none = [0u8; 0];
        let small = decode_header_value(value, &mut none).map(<[u8]>::to_vec);
        match &want {
            Ok(bytes) if !bytes.is_empty() && payload.is_some() => {
                let needed = bytes.len();
                assert_eq!(small, Err(HeaderValueError::BufferTooSmall { needed }), "small buffer");
            }
            Ok(bytes) => assert_eq!(small.as_ref(), Ok(bytes), "small buffer, nothing to decode"),
            Err(_) => {
                if let Err(HeaderValueError::BufferTooSmall { needed }) = small {
                    assert!(needed <= value.len());
                }
            }
        }
    }
    // Base64 of the fuzzer's bytes decodes back to them exactly when they are UTF-8.
    let mut out = vec![0u8; data.len() + 16];
    let got = decode_header_value(&base64_header(data), &mut out).map(<[u8]>::to_vec);
    match std::str::from_utf8(data) {
        Ok(_) => assert_eq!(got, Ok(data.to_vec()), "base64 round trip of {}", show(data)),
        Err(_) => assert_eq!(got, Err(HeaderValueError::BadBase64)),
    }
}
