//! The rule book as tables: every row of the shared table of examples
//! (`rpcscan_oracle::table`: docs/spec.md §1–§4 and the JSON-RPC 2.0 specification §7,
//! which the oracle is checked against too) in both validation modes, then what only the
//! scanner exposes: offsets, answers, accessors (§5), envelope mode (§6) and batch mode.

use rpcscan::{Kind, Parser, Reason, Validation};
use rpcscan_oracle::table::{self, Case};

const STRICT: Parser = Parser::new();
const ENVELOPE: Parser = Parser::new().validation(Validation::Envelope);

/// A verdict as the table spells it: the kind name, or the invalid reason's name.
fn verdict(p: Parser, msg: &[u8]) -> &'static str {
    match p.parse(msg) {
        Ok(m) => m.kind().as_str(),
        Err(e) => e.reason().as_str(),
    }
}

/// The raw id text the table expects: the message's id, or the id recovered from an
/// invalid one.
fn id(msg: &[u8]) -> Option<String> {
    let raw = match STRICT.parse(msg) {
        Ok(m) => m.id().map(|id| id.raw()),
        Err(e) => e.id().map(|id| id.raw()),
    };
    raw.map(|raw| String::from_utf8(raw.to_vec()).unwrap())
}

/// Checks one row: verdict, id, code and answer in strict mode; the same verdict in
/// envelope mode on every JSON text (docs/spec.md §6).
fn check_case(msg: &[u8], want: &str, want_id: Option<&str>) {
    let shown = String::from_utf8_lossy(msg);
    let shown = &shown[..shown.len().min(300)];
    assert_eq!(verdict(STRICT, msg), want, "strict: {shown}");
    assert_eq!(id(msg).as_deref(), want_id, "id: {shown}");
    let code = table::code(want);
    assert_eq!(rpcscan::classify(msg) == Kind::Invalid, code.is_some(), "{shown}");
    if let (Some(code), Err(err)) = (code, STRICT.parse(msg)) {
        assert_eq!(Reason::from_name(want), Some(err.reason()), "{shown}");
        assert_eq!(err.code(), code, "{shown}");
        // docs/spec.md §4: the answer, byte for byte, echoing the recovered id.
        let text = if code == -32700 { "Parse error" } else { "Invalid Request" };
        let id = want_id.unwrap_or("null");
        assert_eq!(
            String::from_utf8(err.response().to_vec()).unwrap(),
            format!(
                r#"{{"jsonrpc": "2.0", "id": {id}, "error": {{"code": {code}, "message": "{text}"}}}}"#
            ),
            "{shown}"
        );
    }
    if code != Some(-32700) {
        assert_eq!(verdict(ENVELOPE, msg), want, "envelope: {shown}");
    }
}

fn check(table: &[Case]) {
    for &(msg, want, id) in table {
        check_case(msg, want, id);
    }
}

#[test]
fn section_1_kinds() {
    check(table::KINDS);
}

#[test]
fn section_2_json_validity() {
    check(table::JSON_VALIDITY);
}

#[test]
#[cfg_attr(miri, ignore = "nesting 500 000 deep: native only")]
fn section_2_generated_examples() {
    for (msg, want, id) in table::generated() {
        check_case(&msg, want, id);
    }
}

#[test]
fn section_2_bytes_that_are_not_utf8() {
    let wrap = |bad: &[u8]| {
        let mut m = br#"{"jsonrpc":"2.0","method":"m","params":[""#.to_vec();
        m.extend_from_slice(bad);
        m.extend_from_slice(br#""]}"#);
        m
    };
    for bad in [
        &b"\xff"[..],
        b"\xc0\xaf",         // overlong /
        b"\xe0\x80\xaf",     // overlong
        b"\xed\xa0\x80",     // encoded surrogate U+D800
        b"\xed\xbf\xbf",     // encoded surrogate U+DFFF
        b"\xf4\x90\x80\x80", // above U+10FFFF
        b"\xf8\x88\x80\x80\x80",
        b"\xe2\x82", // truncated
        b"\x80",
    ] {
        let msg = wrap(bad);
        let err = STRICT.parse(&msg).unwrap_err();
        assert_eq!(err.reason(), Reason::InvalidUtf8, "{bad:?}");
        assert_eq!(err.offset(), Some(41), "{bad:?}");
        assert_eq!(err.code(), -32700);
    }
    let err = STRICT.parse(b"\xff").unwrap_err();
    assert_eq!((err.reason(), err.offset()), (Reason::InvalidUtf8, Some(0)));
    // Envelope mode checks UTF-8 in the strings it reads.
    for msg in [
        &b"{\"jsonrpc\":\"2.0\",\"method\":\"m\xff\"}"[..],
        b"{\"jsonrpc\":\"2.0\",\"id\":\"\xed\xa0\x80\",\"method\":\"m\"}",
        b"{\"jsonrpc\":\"2.0\",\"k\xff\":1,\"method\":\"m\"}",
        b"{\"jsonrpc\":\"2.\xff\",\"method\":\"m\"}",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1,\"message\":\"\xc0\xaf\"}}",
    ] {
        assert_eq!(ENVELOPE.parse(msg).unwrap_err().reason(), Reason::InvalidUtf8);
        assert_eq!(STRICT.parse(msg).unwrap_err().reason(), Reason::InvalidUtf8);
    }
    // A syntax error before the first bad byte is the one reported.
    let err = STRICT.parse(b"{\"jsonrpc\" 1, \"x\":\"\xff\"}").unwrap_err();
    assert_eq!((err.reason(), err.offset()), (Reason::Syntax, Some(11)));
}

#[test]
fn section_3_envelope_rules() {
    check(table::ENVELOPE_RULES);
}

#[test]
fn section_4_invalid_reasons() {
    check(table::INVALID_REASONS);
}

/// docs/spec.md §4: the offset of the first offending byte for the -32700 family, none
/// for -32600 (rows of the table, and their offsets).
#[test]
fn section_4_offsets() {
    let offsets: &[(&[u8], usize)] = &[
        (br#"{"a":}"#, 5),
        (b"\xEF\xBB\xBF{}", 0),
        (b"{} x", 3),
        (b"  ", 2),
        (br#"{"jsonrpc":"2.0","id":5,"method":"x","params":[}"#, 47),
    ];
    for &(msg, offset) in offsets {
        assert_eq!(
            STRICT.parse(msg).unwrap_err().offset(),
            Some(offset),
            "{}",
            String::from_utf8_lossy(msg)
        );
    }
    for (_, cases) in table::SECTIONS {
        for &(msg, want, _) in cases {
            if table::code(want) == Some(-32600) {
                assert_eq!(
                    STRICT.parse(msg).unwrap_err().offset(),
                    None,
                    "{}",
                    String::from_utf8_lossy(msg)
                );
            }
        }
    }
    for reason in Reason::ALL {
        assert_eq!(Reason::from_name(reason.as_str()), Some(reason));
        assert_eq!(table::code(reason.as_str()), Some(reason.code()), "{reason}");
        assert!(!reason.to_string().is_empty());
    }
}

#[test]
fn section_5_accessors() {
    let msg = STRICT
        .parse(br#"{"jsonrpc":"2.0","id":"a\u0062","method":"n\u00e9","params":[1, 2]}"#)
        .unwrap();
    let id = msg.id().unwrap();
    assert_eq!(id.raw(), br#""a\u0062""#);
    assert_eq!(id.as_str().unwrap().decode().unwrap(), "ab");
    assert!(msg.method().unwrap() == "né");
    assert_eq!(msg.method().unwrap().raw(), br"n\u00e9");
    let params = msg.params().unwrap();
    assert_eq!((params.as_bytes(), params.offset()), (&b"[1, 2]"[..], 60));

    let msg = STRICT
        .parse(br#"{"id":null,"error":{"data":[1],"message":"bad \ud800","code":-32603},"jsonrpc":"2.0"}"#)
        .unwrap();
    assert_eq!(msg.kind(), Kind::Error);
    assert!(msg.id().unwrap().is_null());
    assert_eq!(msg.error_code().unwrap().as_i64(), Some(-32603));
    assert_eq!(msg.error_data().unwrap().as_bytes(), b"[1]");
    assert!(msg.error_message().unwrap().decode().is_err());
    assert_eq!(msg.error().unwrap().offset(), 19);
    assert!(msg.method().is_none() && msg.params().is_none() && msg.result().is_none());

    let msg = STRICT.parse(br#"{"jsonrpc":"2.0","result":null,"id":-0}"#).unwrap();
    assert!(msg.result().unwrap().is_null());
    assert_eq!(msg.id().unwrap().as_i64(), Some(0));
    let msg = STRICT.parse(br#"{"jsonrpc":"2.0","error":{"code":1,"message":"m"}}"#).unwrap();
    assert!(msg.id().is_none());
}

#[test]
fn section_6_envelope_mode() {
    // Skipped values are only structurally scanned ...
    for msg in [
        &br#"{"jsonrpc":"2.0","method":"m","params":[01, tru, "\x"]}"#[..],
        b"{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":[\"\xff\x01\"]}",
        br#"{"jsonrpc":"2.0","id":1,"result":{"a" 1 2}}"#,
        br#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":[,,]}}"#,
        br#"{"jsonrpc":"2.0","method":"m","x":{1:2}}"#,
    ] {
        assert!(ENVELOPE.parse(msg).is_ok(), "{}", String::from_utf8_lossy(msg));
        assert_eq!(STRICT.classify(msg), Kind::Invalid);
    }
    // ... but brackets must match, depth is counted, and the envelope is checked strictly.
    for msg in [
        &br#"{"jsonrpc":"2.0","method":"m","params":[}"#[..],
        br#"{"jsonrpc":"2.0","method":"m","params":["]}"#,
        br#"{"jsonrpc":"2.0","method":"m" "params":[]}"#,
        br#"{"jsonrpc":"2.0","method":"m\x"}"#,
        br#"{"jsonrpc":"2.0","id":01,"method":"m"}"#,
        br#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m",}}"#,
        br#"{"jsonrpc":"2.0","method":"m"} x"#,
        b"{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"k\x01\":1}",
    ] {
        let err = ENVELOPE.parse(msg).unwrap_err();
        assert!(err.reason().is_parse_error(), "{}", String::from_utf8_lossy(msg));
    }
    let deep = format!(
        r#"{{"jsonrpc":"2.0","method":"m","params":{}{}}}"#,
        "[".repeat(1024),
        "]".repeat(1024)
    );
    assert_eq!(ENVELOPE.parse(deep.as_bytes()).unwrap_err().reason(), Reason::TooDeep);
}

#[test]
fn jsonrpc_spec_section_7_examples() {
    check(table::JSONRPC_SECTION_7);
}

#[test]
fn batch_mode() {
    for p in [STRICT, ENVELOPE] {
        let batch = br#"[
            {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
            {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},
            {"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},
            {"foo": "boo"},
            {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
            {"jsonrpc": "2.0", "method": "get_data", "id": "9"},
            1, "x", [], [{"jsonrpc": "2.0", "method": "m"}]
        ]"#;
        let got: Vec<&str> = p
            .batch(batch)
            .unwrap()
            .map(|r| match r {
                Ok(m) => m.kind().as_str(),
                Err(e) => e.reason().as_str(),
            })
            .collect();
        assert_eq!(
            got,
            [
                "request",
                "notification",
                "request",
                "bad_version",
                "request",
                "request",
                "not_an_object",
                "not_an_object",
                "not_an_object",
                "not_an_object",
            ]
        );
        let reason = |m: &[u8]| p.batch(m).map(|_| ()).unwrap_err().reason();
        assert_eq!(reason(b" [ ] "), Reason::EmptyBatch);
        assert_eq!(reason(b"[1,"), Reason::Syntax);
        assert_eq!(reason(br#"{"jsonrpc":"2.0","method":"m"}"#), Reason::NotAnObject);
        assert_eq!(reason(b"7"), Reason::NotAnObject);
        // Depth counts the array as 1: an element's params array is 3.
        let deep = format!(
            r#"[{{"jsonrpc":"2.0","method":"m","params":{}{}}}]"#,
            "[".repeat(1022),
            "]".repeat(1022)
        );
        assert!(p.batch(deep.as_bytes()).unwrap().all(|r| r.is_ok()));
        let deeper = format!(
            r#"[{{"jsonrpc":"2.0","method":"m","params":{}{}}}]"#,
            "[".repeat(1023),
            "]".repeat(1023)
        );
        assert_eq!(reason(deeper.as_bytes()), Reason::TooDeep);
    }
}
