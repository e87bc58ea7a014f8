//! The gateway toolkit as a specification: second-level lookups (`Raw::members`,
//! `Raw::get`) against the oracle, MCP routing keys, the Streamable HTTP header check,
//! response bytes, id rewriting round trips, and the no-allocation promises.

rpcscan_testkit::install_counting_allocator!();
use rpcscan_testkit::alloc::allocations_during;

use proptest::prelude::*;
use rpcscan::mcp::{
    decode_header_value, HeaderValueError, McpHeader, McpHeaders, MismatchKind, ResultType,
};
use rpcscan::response::{ErrorResponse, ResultResponse, Style};
use rpcscan::rewrite::{write_replacing, write_with_id, Correlation};
use rpcscan::{Field, Kind, Message, Parser, Raw, Validation};
use rpcscan_oracle as oracle;

fn parse(s: &str) -> Message<'_> {
    rpcscan::parse(s.as_bytes()).unwrap_or_else(|e| panic!("{e}: {s}"))
}

// ---------------------------------------------------------------------------------------
// Raw::members / Raw::get against the oracle.

const ENVELOPE: Parser = Parser::new().validation(Validation::Envelope);

/// Checks `raw` (and objects nested in it, a few levels down) against the oracle.
fn members_agree(raw: Raw<'_>, depth: usize) {
    let text = std::str::from_utf8(raw.as_bytes()).unwrap();
    let ours: Vec<_> = raw.members().collect();
    let Some(want) = oracle::json::members(text) else {
        assert!(ours.is_empty(), "not an object: {text}");
        return;
    };
    assert_eq!(ours.len(), want.len(), "{text}");
    for ((key, value), member) in ours.iter().zip(&want) {
        assert_eq!(value.as_bytes(), member.value.as_bytes(), "{text}");
        assert_eq!(&text[value.offset() - raw.offset()..][..value.len()], member.value);
        match member.key() {
            Some(k) => {
                assert!(*key == k.as_str(), "{key:?} vs {k:?}");
                let count = want.iter().filter(|m| m.key().as_deref() == Some(&k)).count();
                let field = raw.get(&k);
                match count {
                    1 => assert_eq!(field, Field::Unique(*value), "{k} in {text}"),
                    _ => assert_eq!(field, Field::Duplicate, "{k} in {text}"),
                }
            }
            None => assert!(key.decode().is_err()),
        }
        if depth < 3 {
            members_agree(*value, depth + 1);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn members_and_lookups_agree_with_the_oracle(seed in any::<u64>()) {
        let bytes = oracle::gen::message(seed);
        for parser in [Parser::new(), ENVELOPE] {
            if let Ok(msg) = parser.parse(&bytes) {
                for raw in [msg.params(), msg.result(), msg.error(), msg.error_data()].into_iter().flatten() {
                    members_agree(raw, 0);
                }
            }
        }
    }

    #[test]
    fn anything_envelope_mode_lets_through_is_handled_without_panics(seed in any::<u64>(), m in any::<u64>()) {
        // Envelope mode skips params/result structurally: they may be broken JSON.
        let bytes = oracle::gen::mutate(m, &oracle::gen::message(seed));
        if let Ok(msg) = ENVELOPE.parse(&bytes) {
            let mcp = msg.mcp();
            let _ = (mcp.tool_name(), mcp.result_type(), mcp.mcp_name());
            let _ = McpHeaders::new().method(b"m").name(b"=?base64?bg==?=").protocol_version(b"v").check(&msg);
            for raw in [msg.params(), msg.result(), msg.error(), msg.error_data()].into_iter().flatten() {
                for (key, value) in raw.members() {
                    let _ = (key.decode(), value.as_id(), value.members().count());
                }
                let _ = raw.get_many(["name", "uri", "_meta"]);
            }
            let mut out = Vec::new();
            write_with_id(&msg, b"1", &mut out);
        }
    }

    #[test]
    fn restore_of_rewrite_is_the_original(seed in any::<u64>(), pick in 0usize..5) {
        let bytes = oracle::gen::message(seed);
        let Ok(msg) = rpcscan::parse(&bytes) else { return Ok(()) };
        let new_id: &[u8] = [&b"1"[..], b"18446744073709551617", br#""x\u0041""#, b"-0", br#""""#][pick];
        let mut rewritten = Vec::new();
        let replaced = write_with_id(&msg, new_id, &mut rewritten);
        prop_assert_eq!(replaced, msg.id().is_some());
        let again = rpcscan::parse(&rewritten).expect("a rewritten message stays valid");
        prop_assert_eq!(again.kind(), msg.kind());
        prop_assert_eq!(again.method(), msg.method());
        prop_assert_eq!(again.params().map(|p| p.as_bytes()), msg.params().map(|p| p.as_bytes()));
        prop_assert_eq!(again.result().map(|p| p.as_bytes()), msg.result().map(|p| p.as_bytes()));
        match msg.id() {
            Some(id) => {
                prop_assert_eq!(again.id().unwrap().raw(), new_id);
                let mut restored = Vec::new();
                write_with_id(&again, id.raw(), &mut restored);
                prop_assert_eq!(&restored, &bytes);
            }
            None => prop_assert_eq!(&rewritten, &bytes),
        }
    }

    #[test]
    fn correlation_restores_what_it_forwarded(seeds in proptest::collection::vec(any::<u64>(), 1..40)) {
        let messages: Vec<Vec<u8>> = seeds.iter().map(|&s| oracle::gen::message(s)).collect();
        let mut table = Correlation::new();
        let mut sent = Vec::new(); // (assigned, client, original bytes)
        for (client, bytes) in messages.iter().enumerate() {
            let Ok(msg) = rpcscan::parse(bytes) else { continue };
            let mut out = Vec::new();
            match table.forward(client, &msg, &mut out) {
                Some(assigned) => {
                    prop_assert_eq!(msg.kind(), Kind::Request);
                    let fwd = rpcscan::parse(&out).unwrap();
                    prop_assert_eq!(fwd.id().unwrap().as_u64(), Some(assigned));
                    sent.push((assigned, client, msg.id().unwrap().raw().to_vec()));
                }
                None => prop_assert_eq!(&out, bytes),
            }
        }
        prop_assert_eq!(table.len(), sent.len());
        // Answer newest first, each with a response template carrying the downstream id.
        let template = parse(r#"{"jsonrpc":"2.0","id":0,"result":{"ok":true}}"#);
        for (assigned, client, original) in sent.iter().rev() {
            let mut response = Vec::new();
            write_with_id(&template, assigned.to_string().as_bytes(), &mut response);
            let response = rpcscan::parse(&response).unwrap();
            let mut back = Vec::new();
            prop_assert_eq!(table.restore(&response, &mut back), Some(*client));
            let mut want = Vec::new();
            write_with_id(&template, original, &mut want);
            prop_assert_eq!(back, want);
            // A second answer with the same id is not routed anywhere.
            prop_assert_eq!(table.restore(&response, &mut Vec::new()), None);
        }
        prop_assert!(table.is_empty());
    }
}

// ---------------------------------------------------------------------------------------
// MCP routing keys.

#[test]
fn mcp_routing_keys() {
    // (message, name, uri, protocol version, progress token) as raw bytes; "-" missing,
    // "dup" duplicated.
    let cases: &[(&str, &str, &str, &str, &str)] = &[
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"name":"inner"}}}"#,
            r#""echo""#,
            "-",
            "-",
            "-",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"name":"inner"}}}"#,
            "-",
            "-",
            "-",
            "-",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}"#,
            "dup",
            "-",
            "-",
            "-",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","n\u0061me":"b"}}"#,
            "dup",
            "-",
            "-",
            "-",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"Name":"a"}}"#,
            "-",
            "-",
            "-",
            "-",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///x"}}"#,
            "-",
            r#""file:///x""#,
            "-",
            "-",
        ),
        (r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[{"name":"x"}]}"#, "-", "-", "-", "-"),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":18446744073709551617}}}"#,
            "-",
            "-",
            r#""2026-07-28""#,
            "18446744073709551617",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"progressToken":"t","progressToken":"u"}}}"#,
            "-",
            "-",
            "-",
            "dup",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"progressToken":"t"},"_meta":{}}}"#,
            "-",
            "-",
            "dup",
            "dup",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":"not an object"}}"#,
            "-",
            "-",
            "-",
            "-",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{ "_meta" : { "io.modelcontextprotocol\/protocolVersion" : "v" } }}"#,
            "-",
            "-",
            r#""v""#,
            "-",
        ),
        (r#"{"jsonrpc":"2.0","id":1,"result":{"name":"not params"}}"#, "-", "-", "-", "-"),
    ];
    fn shown(f: Field<'_>) -> String {
        match f {
            Field::Missing => "-".into(),
            Field::Duplicate => "dup".into(),
            Field::Unique(raw) => String::from_utf8_lossy(raw.as_bytes()).into_owned(),
        }
    }
    for &(msg, name, uri, version, token) in cases {
        let mcp = parse(msg).mcp();
        assert_eq!(
            [
                shown(mcp.name()),
                shown(mcp.uri()),
                shown(mcp.protocol_version()),
                shown(mcp.progress_token())
            ],
            [name, uri, version, token],
            "{msg}"
        );
    }
}

#[test]
fn mcp_typed_shortcuts_and_result_type() {
    let call =
        parse(r#"{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"s\u00e9arch"}}"#);
    assert!(call.mcp().tool_name().unwrap() == "séarch");
    assert!(call.mcp().prompt_name().is_none());
    assert!(call.mcp().mcp_name().unwrap().as_str().unwrap() == "séarch");
    let prompt = parse(r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p"}}"#);
    assert!(prompt.mcp().prompt_name().unwrap() == "p");
    let note = parse(r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"n"}}"#);
    assert!(note.mcp().tool_name().is_none(), "a notification is not a call");
    assert!(note.mcp().mcp_name().is_none());
    let numeric = parse(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}"#);
    assert!(numeric.mcp().tool_name().is_none());

    let cases: &[(&str, Option<ResultType<'static>>)] = &[
        (r#"{"jsonrpc":"2.0","id":1,"result":{}}"#, Some(ResultType::Complete)),
        (r#"{"jsonrpc":"2.0","id":1,"result":null}"#, Some(ResultType::Complete)),
        (
            r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"}}"#,
            Some(ResultType::Complete),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_\u0072equired"}}"#,
            Some(ResultType::InputRequired),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","resultType":"input_required"}}"#,
            Some(ResultType::Ambiguous),
        ),
        (r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":1}}"#, Some(ResultType::Ambiguous)),
        (
            r#"{"jsonrpc":"2.0","id":1,"result":{"inputRequests":{"a":{"method":"x","resultType":"no"}}}}"#,
            Some(ResultType::Complete),
        ),
        (r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}"#, None),
        (r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"resultType":"task"}}"#, None),
    ];
    for &(msg, want) in cases {
        assert_eq!(parse(msg).mcp().result_type(), want, "{msg}");
    }
    let task = parse(r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"task"}}"#);
    assert!(matches!(task.mcp().result_type(), Some(ResultType::Other(t)) if t == "task"));
}

#[test]
fn raw_as_id() {
    let msg = parse(
        r#"{"jsonrpc":"2.0","method":"m","params":{"a":"x\u0041","b":-0,"c":1e2,"d":null,"e":[1],"f":123456789012345678901234567890}}"#,
    );
    let p = msg.params().unwrap();
    let id = |k: &str| p.get(k).unique().and_then(|v| v.as_id());
    assert_eq!(id("a").unwrap().raw(), br#""x\u0041""#);
    assert_eq!(id("a").unwrap().as_str().unwrap().decode().unwrap(), "xA");
    assert_eq!(id("b").unwrap().as_i64(), Some(0));
    assert!(id("c").is_none() && id("d").is_none() && id("e").is_none());
    assert!(id("f").unwrap().is_integer());
}

// ---------------------------------------------------------------------------------------
// Streamable HTTP header check.

const CALL: &str = r#"{"jsonrpc":"2.0","id":"c-1","method":"tools/call","params":{"name":"get_weather","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
const READ: &str = r#"{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///\u4e16\u754c","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
const PING: &str = r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#;
const NOTE: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const RESULT: &str = r#"{"jsonrpc":"2.0","id":3,"result":{}}"#;
const DUP_NAME: &str =
    r#"{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"a","n\u0061me":"a"}}"#;
const NO_NAME: &str = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"arguments":{}}}"#;
const SURROGATE: &str =
    r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"\ud800"}}"#;
const SENTINEL: &str =
    r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"=?base64?literal?="}}"#;
const DUP_META: &str = r#"{"jsonrpc":"2.0","id":8,"method":"ping","params":{"_meta":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;

#[test]
fn header_check_table() {
    use McpHeader::*;
    use MismatchKind::*;
    type H = Option<&'static str>;
    // (body, Mcp-Method, Mcp-Name, MCP-Protocol-Version, expected failure)
    type Failure = Option<(McpHeader, MismatchKind)>;
    let cases: &[(&str, H, H, H, Failure)] = &[
        (CALL, Some("tools/call"), Some("get_weather"), Some("2026-07-28"), None),
        (CALL, Some("tools/call"), Some("=?base64?Z2V0X3dlYXRoZXI=?="), Some("2026-07-28"), None),
        (CALL, Some("tools/call"), Some("get_weather"), None, Some((ProtocolVersion, Missing))),
        (
            CALL,
            Some("tools/call"),
            Some("get_weather"),
            Some("2025-11-25"),
            Some((ProtocolVersion, Differs)),
        ),
        (
            CALL,
            Some("tools/call"),
            Some("get_weather"),
            Some(" 2026-07-28"),
            Some((ProtocolVersion, Malformed)),
        ),
        (
            CALL,
            Some("tools/call"),
            Some("get_weather"),
            Some("=?base64?MjAyNi0wNy0yOA==?="),
            Some((ProtocolVersion, Differs)),
        ),
        (CALL, None, Some("get_weather"), Some("2026-07-28"), Some((Method, Missing))),
        (
            CALL,
            Some("tools/list"),
            Some("get_weather"),
            Some("2026-07-28"),
            Some((Method, Differs)),
        ),
        (
            CALL,
            Some("Tools/Call"),
            Some("get_weather"),
            Some("2026-07-28"),
            Some((Method, Differs)),
        ),
        (
            CALL,
            Some("tools/call\t"),
            Some("get_weather"),
            Some("2026-07-28"),
            Some((Method, Malformed)),
        ),
        (
            CALL,
            Some("=?base64?dG9vbHMvY2FsbA==?="),
            Some("get_weather"),
            Some("2026-07-28"),
            Some((Method, Differs)),
        ),
        (CALL, Some("tools/call"), None, Some("2026-07-28"), Some((Name, Missing))),
        (CALL, Some("tools/call"), Some("get_weathe"), Some("2026-07-28"), Some((Name, Differs))),
        (
            CALL,
            Some("tools/call"),
            Some("get_weather "),
            Some("2026-07-28"),
            Some((Name, Malformed)),
        ),
        (
            CALL,
            Some("tools/call"),
            Some("=?base64?Z2V0X3dlYXRoZXI?="),
            Some("2026-07-28"),
            Some((Name, Malformed)),
        ),
        (
            CALL,
            Some("tools/call"),
            Some("=?base64?Z2V0X3dlYXRoZXJ=?="),
            Some("2026-07-28"),
            Some((Name, Malformed)),
        ),
        (
            CALL,
            Some("tools/call"),
            Some("=?BASE64?Z2V0X3dlYXRoZXI=?="),
            Some("2026-07-28"),
            Some((Name, Differs)),
        ),
        (
            READ,
            Some("resources/read"),
            Some("=?base64?ZmlsZTovLy/kuJbnlYw=?="),
            Some("2026-07-28"),
            None,
        ),
        (
            READ,
            Some("resources/read"),
            Some("file:///\u{4e16}\u{754c}"),
            Some("2026-07-28"),
            Some((Name, Malformed)),
        ),
        (
            READ,
            Some("resources/read"),
            Some(r"file:///\u4e16\u754c"),
            Some("2026-07-28"),
            Some((Name, Differs)),
        ),
        (PING, Some("ping"), None, None, None),
        (PING, Some("ping"), None, Some("2026-07-28"), None),
        (PING, Some("ping"), Some("x"), None, Some((Name, Unexpected))),
        (NOTE, None, None, None, None),
        (NOTE, Some("notifications/initialized"), None, None, None),
        (NOTE, Some("notifications/cancelled"), None, None, Some((Method, Differs))),
        (RESULT, None, None, None, None),
        (RESULT, Some("ping"), None, None, Some((Method, Unexpected))),
        (DUP_NAME, Some("prompts/get"), Some("a"), None, Some((Name, BadBodyValue))),
        (NO_NAME, Some("tools/call"), Some("a"), None, Some((Name, BadBodyValue))),
        // base64 of the WTF-8 bytes of a lone surrogate: not UTF-8, never equal.
        (SURROGATE, Some("tools/call"), Some("=?base64?7aCA?="), None, Some((Name, Differs))),
        // A literal that looks like the sentinel travels encoded, and is decoded.
        (SENTINEL, Some("tools/call"), Some("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="), None, None),
        (SENTINEL, Some("tools/call"), Some("=?base64?literal?="), None, Some((Name, Malformed))),
        (DUP_META, Some("ping"), None, Some("2026-07-28"), Some((ProtocolVersion, BadBodyValue))),
        (DUP_META, Some("ping"), None, None, Some((ProtocolVersion, Missing))),
    ];
    for &(body, method, name, version, want) in cases {
        let msg = parse(body);
        let mut headers = McpHeaders::new();
        if let Some(v) = method {
            headers = headers.method(v.as_bytes());
        }
        if let Some(v) = name {
            headers = headers.name(v.as_bytes());
        }
        if let Some(v) = version {
            headers = headers.protocol_version(v.as_bytes());
        }
        let got = headers.check(&msg).err().map(|e| (e.header(), e.kind()));
        assert_eq!(got, want, "{body} / {method:?} {name:?} {version:?}");
    }
}

#[test]
fn header_mismatch_responses() {
    let err = McpHeaders::new()
        .method(b"tools/call")
        .name(b"other")
        .protocol_version(b"2026-07-28")
        .check(&parse(CALL))
        .unwrap_err();
    assert_eq!(err.response().to_vec(), br#"{"jsonrpc": "2.0", "id": "c-1", "error": {"code": -32020, "message": "Header mismatch: Mcp-Name header does not match the body"}}"#);
    assert_eq!(err.response().style(Style::Compact).to_vec(), br#"{"jsonrpc":"2.0","id":"c-1","error":{"code":-32020,"message":"Header mismatch: Mcp-Name header does not match the body"}}"#);
    assert_eq!(err.id().unwrap().raw(), br#""c-1""#);
    let big = parse(r#"{"jsonrpc":"2.0","id":18446744073709551617,"method":"ping"}"#);
    let err = McpHeaders::new().check(&big).unwrap_err();
    assert_eq!(err.to_string(), "Header mismatch: Mcp-Method header is missing");
    assert_eq!(err.response().to_vec(), br#"{"jsonrpc": "2.0", "id": 18446744073709551617, "error": {"code": -32020, "message": "Header mismatch: Mcp-Method header is missing"}}"#);
    let note = parse(NOTE);
    let err = McpHeaders::new().method(b"x").check(&note).unwrap_err();
    assert_eq!(err.response().to_vec(), br#"{"jsonrpc": "2.0", "id": null, "error": {"code": -32020, "message": "Header mismatch: Mcp-Method header does not match the body"}}"#);
}

#[test]
fn decode_header_values() {
    let mut buf = [0u8; 16];
    assert_eq!(decode_header_value(b"", &mut buf), Ok(&b""[..]));
    assert_eq!(decode_header_value(b"=?base64??=", &mut buf), Ok(&b""[..]));
    assert_eq!(decode_header_value(b"=?base64?IHBhZGRlZCA=?=", &mut buf), Ok(&b" padded "[..]));
    assert_eq!(
        decode_header_value(b"=?base64?bGluZTEKbGluZTI=?=", &mut buf),
        Ok(&b"line1\nline2"[..])
    );
    assert_eq!(decode_header_value(b"=?base64?7aCA?=", &mut buf), Err(HeaderValueError::BadBase64));
    assert_eq!(decode_header_value(b"=?base64?Zg=?=", &mut buf), Err(HeaderValueError::BadBase64));
    assert_eq!(decode_header_value(b"a\x7fb", &mut buf), Err(HeaderValueError::InvalidCharacters));
    assert_eq!(decode_header_value(b"\tx", &mut buf), Err(HeaderValueError::InvalidCharacters));
    let mut small = [0u8; 2];
    assert_eq!(
        decode_header_value(b"=?base64?Zm9v?=", &mut small),
        Err(HeaderValueError::BufferTooSmall { needed: 3 })
    );
}

// ---------------------------------------------------------------------------------------
// Response bytes.

#[test]
fn response_bytes() {
    let cases: &[(Vec<u8>, &[u8])] = &[
        (ResultResponse::new(b"1", b"{}").to_vec(), br#"{"jsonrpc": "2.0", "id": 1, "result": {}}"#),
        (ResultResponse::new(br#""a\"b""#, b"null").style(Style::Compact).to_vec(), br#"{"jsonrpc":"2.0","id":"a\"b","result":null}"#),
        (ResultResponse::new(b"-0", br#"{"content": [ ]}"#).to_vec(), br#"{"jsonrpc": "2.0", "id": -0, "result": {"content": [ ]}}"#),
        (ErrorResponse::standard(rpcscan::response::HEADER_MISMATCH).to_vec(), br#"{"jsonrpc": "2.0", "id": null, "error": {"code": -32020, "message": "Header mismatch"}}"#),
        (ErrorResponse::missing_client_capability(br#"{"sampling":{}}"#).style(Style::Compact).id(b"9").to_vec(), br#"{"jsonrpc":"2.0","id":9,"error":{"code":-32021,"message":"Missing required client capability","data":{"requiredCapabilities":{"sampling":{}}}}}"#),
        (ErrorResponse::unsupported_protocol_version("x\"y", &[]).style(Style::Compact).to_vec(), br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":[],"requested":"x\"y"}}}"#),
        (ErrorResponse::unsupported_protocol_version("1", &["2026-07-28"]).data(b"0").to_vec(), br#"{"jsonrpc": "2.0", "id": null, "error": {"code": -32022, "message": "Unsupported protocol version", "data": 0}}"#),
    ];
    for (got, want) in cases {
        assert_eq!(String::from_utf8_lossy(got), String::from_utf8_lossy(want));
        assert!(rpcscan::parse(got).is_ok(), "{}", String::from_utf8_lossy(got));
    }
}

// ---------------------------------------------------------------------------------------
// Splicing details.

#[test]
fn splicing_keeps_every_other_byte() {
    let cases: &[(&str, &str, &str)] = &[
        (
            r#"{"id":1,"jsonrpc":"2.0","method":"m"}"#,
            "42",
            r#"{"id":42,"jsonrpc":"2.0","method":"m"}"#,
        ),
        (
            "{ \"jsonrpc\" : \"2.0\" ,\r\n\t\"id\"\t:\t\"x\" , \"method\":\"m\" }  ",
            "7",
            "{ \"jsonrpc\" : \"2.0\" ,\r\n\t\"id\"\t:\t7 , \"method\":\"m\" }  ",
        ),
        (
            r#"{"jsonrpc":"2.0","error":{"code":1,"message":"m","id":5},"id":null}"#,
            "3",
            r#"{"jsonrpc":"2.0","error":{"code":1,"message":"m","id":5},"id":3}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","method":"m","params":{"id":1}}"#,
            "3",
            r#"{"jsonrpc":"2.0","method":"m","params":{"id":1}}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","i\u0064":"é","result":1}"#,
            "3",
            r#"{"jsonrpc":"2.0","i\u0064":3,"result":1}"#,
        ),
    ];
    for &(msg, id, want) in cases {
        let mut out = Vec::new();
        write_with_id(&parse(msg), id.as_bytes(), &mut out);
        assert_eq!(String::from_utf8(out).unwrap(), want);
    }
    // A value from another message is not spliced.
    let (a, b) = (
        String::from(r#"{"jsonrpc":"2.0","method":"m","params":{"x":1}}"#),
        String::from(r#"{"jsonrpc":"2.0","method":"m","params":{"x":1}}"#),
    );
    let (a, b) = (parse(&a), parse(&b));
    let x = b.params().unwrap().get("x").unique().unwrap();
    let mut out = Vec::new();
    assert!(!write_replacing(a.as_bytes(), x, b"2", &mut out));
    assert_eq!(out, a.as_bytes());
}

#[test]
fn correlation_by_decoded_value() {
    let mut table = Correlation::new();
    let downstream = parse(r#"{"jsonrpc":"2.0","id":"\u0061b","method":"m"}"#);
    table.insert(downstream.id().unwrap(), "c", b"[orig]").unwrap();
    assert!(table
        .insert(parse(r#"{"jsonrpc":"2.0","id":"ab","method":"m"}"#).id().unwrap(), "d", b"x")
        .is_err());
    // The server echoes the id with other escapes: still the same id.
    let response = parse(r#"{"jsonrpc":"2.0","id":"a\u0062","result":{}}"#);
    let mut out = Vec::new();
    assert_eq!(table.restore(&response, &mut out), Some("c"));
    assert_eq!(out, br#"{"jsonrpc":"2.0","id":[orig],"result":{}}"#);
    // Integers: -0 is 0; 1 is not "1".
    table
        .insert(parse(r#"{"jsonrpc":"2.0","id":0,"method":"m"}"#).id().unwrap(), "zero", b"0")
        .unwrap();
    assert_eq!(
        table.restore(&parse(r#"{"jsonrpc":"2.0","id":"0","result":{}}"#), &mut Vec::new()),
        None
    );
    assert_eq!(
        table.restore(&parse(r#"{"jsonrpc":"2.0","id":-0,"result":{}}"#), &mut Vec::new()),
        Some("zero")
    );
    // Requests and notifications are never restored.
    table
        .insert(parse(r#"{"jsonrpc":"2.0","id":5,"method":"m"}"#).id().unwrap(), "five", b"5")
        .unwrap();
    assert_eq!(
        table.restore(&parse(r#"{"jsonrpc":"2.0","id":5,"method":"m"}"#), &mut Vec::new()),
        None
    );
    assert_eq!(table.len(), 1);
    let pending: Vec<_> = table.drain().collect();
    assert_eq!((*pending[0].client(), pending[0].original_id()), ("five", &b"5"[..]));
}

// ---------------------------------------------------------------------------------------
// No allocation.

#[test]
fn hot_paths_allocate_nothing() {
    let messages: Vec<Vec<u8>> =
        rpcscan_oracle::corpus::messages(rpcscan_oracle::corpus::Mix::Mixed, 1 << 20, 3);
    let mut out = Vec::with_capacity(1 << 20);
    let headers = McpHeaders::new()
        .method(b"tools/call")
        .name(b"=?base64?Z2V0X3dlYXRoZXI=?=")
        .protocol_version(b"2026-07-28");
    let mut table = Correlation::new();
    let ids: Vec<_> = (0..64u64).map(|n| n.to_string()).collect();
    for id in &ids {
        table
            .insert(
                parse(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"m"}}"#)).id().unwrap(),
                0u8,
                b"\"orig\"",
            )
            .unwrap();
    }
    let mut buf = [0u8; 64];
    // Requests forwarded and answered, 32 in flight: once the table has grown to that, a
    // round trip allocates nothing.
    let request = parse(CALL);
    let answers: Vec<Vec<u8>> = (1..=2048u64)
        .map(|n| format!(r#"{{"jsonrpc":"2.0","id":{n},"result":{{}}}}"#).into_bytes())
        .collect();
    let mut relay = Correlation::new();
    let mut round_trips = |range: std::ops::Range<usize>, out: &mut Vec<u8>| {
        for n in range {
            out.clear();
            relay.forward(1u8, &request, out);
            if n >= 32 {
                let answer = rpcscan::parse(&answers[n - 32]).unwrap();
                out.clear();
                assert_eq!(relay.restore(&answer, out), Some(1));
            }
        }
    };
    round_trips(0..1024, &mut out);
    let n = allocations_during(|| round_trips(1024..2048, &mut out));
    assert_eq!(n, 0, "forwarding and restoring");
    let n = allocations_during(|| {
        for bytes in &messages {
            let Ok(msg) = rpcscan::parse(bytes) else {
                continue;
            };
            let mcp = msg.mcp();
            std::hint::black_box((mcp.tool_name(), mcp.result_type(), mcp.progress_token()));
            std::hint::black_box(headers.check_with(&msg, &mcp).is_ok());
            for raw in [msg.params(), msg.result()].into_iter().flatten() {
                std::hint::black_box(raw.members().count());
                std::hint::black_box(raw.get("_meta"));
            }
            out.clear();
            write_with_id(&msg, b"123456", &mut out);
            std::hint::black_box(table.get(&msg.id().unwrap_or(parse(PING).id().unwrap())));
        }
        let call = parse(CALL);
        assert!(headers.check(&call).is_ok());
        assert!(decode_header_value(b"=?base64?SGVsbG8sIOS4lueVjA==?=", &mut buf).is_ok());
        ErrorResponse::unsupported_protocol_version("x", &["a", "b"]).id(b"1").write(&mut out);
        ResultResponse::new(b"1", b"{}").write(&mut out);
        std::hint::black_box(&out);
    });
    assert_eq!(n, 0);
}
