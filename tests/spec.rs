//! SPEC.md as tables: every example of §1–§4 and §6, and the JSON-RPC 2.0 specification's
//! §7 examples, each with its expected verdict, in both validation modes.

use rpcscan::{Kind, Parser, Reason, Validation};

const STRICT: Parser = Parser::new();
const ENVELOPE: Parser = Parser::new().validation(Validation::Envelope);

/// Expected verdict: a kind, or an invalid reason.
#[derive(Debug, Clone, Copy, PartialEq)]
enum V {
    K(Kind),
    R(Reason),
}
use V::{K, R};

fn verdict(p: Parser, msg: &[u8]) -> V {
    match p.parse(msg) {
        Ok(m) => K(m.kind()),
        Err(e) => R(e.reason()),
    }
}

fn check(table: &[(&str, V)]) {
    for &(msg, want) in table {
        let got = verdict(STRICT, msg.as_bytes());
        assert_eq!(got, want, "strict: {msg}");
        assert_eq!(
            rpcscan::classify(msg.as_bytes()) == Kind::Invalid,
            matches!(want, R(_))
        );
        // Envelope mode agrees on every valid JSON text.
        if !matches!(want, R(r) if r.is_parse_error()) {
            assert_eq!(verdict(ENVELOPE, msg.as_bytes()), want, "envelope: {msg}");
        }
    }
}

#[test]
fn section_1_kinds() {
    check(&[
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            K(Kind::Request),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            K(Kind::Notification),
        ),
        (r#"{"jsonrpc":"2.0","id":1,"result":{}}"#, K(Kind::Result)),
        (
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"x"}}"#,
            K(Kind::Error),
        ),
        (
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#,
            K(Kind::Error),
        ),
        (
            r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"x"}}"#,
            K(Kind::Error),
        ),
        (r#"{"jsonrpc":"2.0"}"#, R(Reason::NoResultOrError)),
    ]);
}

#[test]
fn section_2_json_validity() {
    let obj = |inner: &str| format!(r#"{{"jsonrpc":"2.0","method":"m","params":[{inner}]}}"#);
    let mut table: Vec<(String, V)> = vec![
        // UTF-8 and BOM
        (
            "\u{feff}{\"jsonrpc\":\"2.0\",\"method\":\"m\"}".into(),
            R(Reason::Bom),
        ),
        (obj("\"\u{e9}\u{1F600}\u{10FFFF}\""), K(Kind::Notification)),
        // whitespace
        (
            " \t\r\n{\"jsonrpc\" : \"2.0\" ,\n\"method\":\"m\" }\r\n ".into(),
            K(Kind::Notification),
        ),
        (
            "\u{c}{\"jsonrpc\":\"2.0\",\"method\":\"m\"}".into(),
            R(Reason::Syntax),
        ),
        (
            "{\"jsonrpc\":\"2.0\",\u{a0}\"method\":\"m\"}".into(),
            R(Reason::Syntax),
        ),
        (
            "{\"jsonrpc\":\"2.0\",\u{2028}\"method\":\"m\"}".into(),
            R(Reason::Syntax),
        ),
        (
            "{\"jsonrpc\":\"2.0\",\u{0}\"method\":\"m\"}".into(),
            R(Reason::Syntax),
        ),
        // strings
        (obj("\"a\u{1}b\""), R(Reason::Syntax)),
        (obj("\"a\u{1f}b\""), R(Reason::Syntax)),
        (obj(r#""\"\\\/\b\f\n\r\t\u00e9""#), K(Kind::Notification)),
        (obj(r#""\a""#), R(Reason::Syntax)),
        (obj(r#""\x41""#), R(Reason::Syntax)),
        (obj(r#""\u12""#), R(Reason::Syntax)),
        (obj(r#""\ud800""#), K(Kind::Notification)),
        (obj(r#""\udc00\ud800x""#), K(Kind::Notification)),
        // numbers
        (
            obj("0, -0, 1.5, -1.5e10, 1E+2, 1e-2, 0.0"),
            K(Kind::Notification),
        ),
        (obj(&"9".repeat(400)), K(Kind::Notification)),
        (obj("1e400"), K(Kind::Notification)),
        (obj("01"), R(Reason::Syntax)),
        (obj("+1"), R(Reason::Syntax)),
        (obj(".5"), R(Reason::Syntax)),
        (obj("1."), R(Reason::Syntax)),
        (obj("NaN"), R(Reason::Syntax)),
        (obj("Infinity"), R(Reason::Syntax)),
        (obj("0x10"), R(Reason::Syntax)),
        (obj("-"), R(Reason::Syntax)),
        (obj("1e"), R(Reason::Syntax)),
        // literals
        (obj("true, false, null"), K(Kind::Notification)),
        (obj("tru"), R(Reason::Syntax)),
        (obj("nul"), R(Reason::Syntax)),
        (obj("True"), R(Reason::Syntax)),
        // trailing bytes
        (
            r#"{"jsonrpc":"2.0","method":"m"} {}"#.into(),
            R(Reason::TrailingBytes),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"m"},"#.into(),
            R(Reason::TrailingBytes),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"m"}x"#.into(),
            R(Reason::TrailingBytes),
        ),
        // grammar
        (
            r#"{"jsonrpc":"2.0","method":"m",}"#.into(),
            R(Reason::Syntax),
        ),
        (
            r#"{"jsonrpc":"2.0" "method":"m"}"#.into(),
            R(Reason::Syntax),
        ),
        (r#"{"jsonrpc":"2.0","method""m"}"#.into(), R(Reason::Syntax)),
        (r#"{"jsonrpc":"2.0",method:"m"}"#.into(), R(Reason::Syntax)),
        (r#"{'jsonrpc':'2.0'}"#.into(), R(Reason::Syntax)),
        (r#"{"jsonrpc":"2.0","method":"m""#.into(), R(Reason::Syntax)),
        (r#"{"a":}"#.into(), R(Reason::Syntax)),
        (obj("[1,]"), R(Reason::Syntax)),
        (obj("{\"a\":1,}"), R(Reason::Syntax)),
        (obj("{\"a\" 1}"), R(Reason::Syntax)),
        (obj("{1:1}"), R(Reason::Syntax)),
        (obj("[1 2]"), R(Reason::Syntax)),
        (obj("]"), R(Reason::Syntax)),
        // empty
        ("".into(), R(Reason::Empty)),
        (" \t\r\n".into(), R(Reason::Empty)),
        // top level
        ("[]".into(), R(Reason::Batch)),
        (
            r#"[{"jsonrpc":"2.0","method":"m"}]"#.into(),
            R(Reason::Batch),
        ),
        ("1".into(), R(Reason::NotAnObject)),
        ("\"x\"".into(), R(Reason::NotAnObject)),
        ("null".into(), R(Reason::NotAnObject)),
        ("[1,]".into(), R(Reason::Syntax)),
    ];
    // Depth: the top-level object is depth 1; params' array is 2.
    let nest = |depth: usize| {
        let inner = depth - 2; // brackets inside params' array
        obj(&format!("{}{}", "[".repeat(inner), "]".repeat(inner)))
    };
    table.push((nest(1024), K(Kind::Notification)));
    table.push((nest(1025), R(Reason::TooDeep)));
    table.push((
        format!(
            r#"{{"jsonrpc":"2.0","method":"m","params":{}1{}}}"#,
            "{\"a\":".repeat(1023),
            "}".repeat(1023)
        ),
        K(Kind::Notification),
    ));
    table.push((
        format!(
            r#"{{"jsonrpc":"2.0","method":"m","params":{}1{}}}"#,
            "{\"a\":".repeat(1024),
            "}".repeat(1024)
        ),
        R(Reason::TooDeep),
    ));
    table.push((obj(&"[".repeat(200_000)), R(Reason::TooDeep)));
    let table: Vec<(&str, V)> = table.iter().map(|(s, v)| (s.as_str(), *v)).collect();
    check(&table);
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
        assert_eq!(
            ENVELOPE.parse(msg).unwrap_err().reason(),
            Reason::InvalidUtf8
        );
        assert_eq!(STRICT.parse(msg).unwrap_err().reason(), Reason::InvalidUtf8);
    }
    // A syntax error before the first bad byte is the one reported.
    let err = STRICT
        .parse(b"{\"jsonrpc\" 1, \"x\":\"\xff\"}")
        .unwrap_err();
    assert_eq!((err.reason(), err.offset()), (Reason::Syntax, Some(11)));
}

#[test]
fn section_3_envelope_rules() {
    check(&[
        // keys compared after unescaping; case matters
        (
            r#"{"jsonrpc":"2.0","m\u0065thod":"x"}"#,
            K(Kind::Notification),
        ),
        (
            r#"{"\u006asonrpc":"2.0","id":1,"method":"x"}"#,
            K(Kind::Request),
        ),
        (
            r#"{"jsonrpc":"2.0","Method":"x"}"#,
            R(Reason::NoResultOrError),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"x","METHOD":1,"ID":null}"#,
            K(Kind::Notification),
        ),
        // 3.1 duplicates
        (
            r#"{"jsonrpc":"2.0","method":"x","method":"y"}"#,
            R(Reason::DuplicateKey),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"x","m\u0065thod":"x"}"#,
            R(Reason::DuplicateKey),
        ),
        (
            r#"{"jsonrpc":"2.0","jsonrpc":"2.0","method":"x"}"#,
            R(Reason::DuplicateKey),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#,
            R(Reason::DuplicateKey),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"x","params":[],"params":{}}"#,
            R(Reason::DuplicateKey),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"result":1,"result":2}"#,
            R(Reason::DuplicateKey),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"result":1,"params":1,"params":2}"#,
            R(Reason::DuplicateKey),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"x","a":1,"a":2}"#,
            K(Kind::Notification),
        ),
        // 3.2 version
        (r#"{"method":"x"}"#, R(Reason::BadVersion)),
        (r#"{"jsonrpc":"1.0","method":"x"}"#, R(Reason::BadVersion)),
        (r#"{"jsonrpc":2.0,"method":"x"}"#, R(Reason::BadVersion)),
        (r#"{"jsonrpc":"2.0 ","method":"x"}"#, R(Reason::BadVersion)),
        // "2.0" is compared whole: a longer string that starts like it is not it.
        (r#"{"jsonrpc":"2.00","method":"x"}"#, R(Reason::BadVersion)),
        (r#"{"jsonrpc":null,"method":"x"}"#, R(Reason::BadVersion)),
        (
            r#"{"jsonrpc":"2\u002e0","method":"x"}"#,
            K(Kind::Notification),
        ),
        (
            r#"{"jsonrpc":"\u0032.0","method":"x"}"#,
            K(Kind::Notification),
        ),
        // 3.3 method
        (r#"{"jsonrpc":"2.0","method":1}"#, R(Reason::BadMethod)),
        (
            r#"{"jsonrpc":"2.0","method":null,"id":1}"#,
            R(Reason::BadMethod),
        ),
        (r#"{"jsonrpc":"2.0","method":["x"]}"#, R(Reason::BadMethod)),
        (
            r#"{"jsonrpc":"2.0","method":"x","result":1,"id":1}"#,
            R(Reason::MethodWithResponse),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"x","error":{"code":1,"message":"m"}}"#,
            R(Reason::MethodWithResponse),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"x","params":null}"#,
            R(Reason::BadParams),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"x","params":1,"id":1}"#,
            R(Reason::BadParams),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"x","params":"a"}"#,
            R(Reason::BadParams),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"x","params":{}}"#,
            K(Kind::Notification),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"x","params":[]}"#,
            K(Kind::Notification),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"x","id":"a"}"#,
            K(Kind::Request),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"x","id":""}"#,
            K(Kind::Request),
        ),
        (r#"{"jsonrpc":"2.0","method":"x","id":0}"#, K(Kind::Request)),
        (
            r#"{"jsonrpc":"2.0","method":"x","id":-0}"#,
            K(Kind::Request),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"x","id":-12}"#,
            K(Kind::Request),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"x","id":123456789012345678901234567890}"#,
            K(Kind::Request),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"x","id":null}"#,
            R(Reason::BadId),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"x","id":1.0}"#,
            R(Reason::BadId),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"x","id":1e2}"#,
            R(Reason::BadId),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"x","id":true}"#,
            R(Reason::BadId),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"x","id":{}}"#,
            R(Reason::BadId),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"x","id":[1]}"#,
            R(Reason::BadId),
        ),
        // 3.4 responses
        (r#"{"jsonrpc":"2.0","result":null,"id":1}"#, K(Kind::Result)),
        (
            r#"{"jsonrpc":"2.0","result":[1,{"method":"x"}],"id":"z"}"#,
            K(Kind::Result),
        ),
        (r#"{"jsonrpc":"2.0","result":1}"#, R(Reason::BadId)),
        (
            r#"{"jsonrpc":"2.0","result":1,"id":null}"#,
            R(Reason::BadId),
        ),
        (r#"{"jsonrpc":"2.0","result":1,"id":1.5}"#, R(Reason::BadId)),
        (
            r#"{"jsonrpc":"2.0","error":{"code":1,"message":"m"},"id":"a"}"#,
            K(Kind::Error),
        ),
        (
            r#"{"jsonrpc":"2.0","error":{"code":-1,"message":"m","data":{"x":[1]}},"id":1}"#,
            K(Kind::Error),
        ),
        (
            r#"{"jsonrpc":"2.0","error":{"code":99999999999999999999999,"message":""}}"#,
            K(Kind::Error),
        ),
        (
            r#"{"jsonrpc":"2.0","error":{"message":"m","c\u006fde":1,"data":1,"data":2}}"#,
            K(Kind::Error),
        ),
        (
            r#"{"jsonrpc":"2.0","error":{"code":1,"message":"m"},"id":1.5}"#,
            R(Reason::BadId),
        ),
        (
            r#"{"jsonrpc":"2.0","error":{"code":1,"message":"m"},"id":[]}"#,
            R(Reason::BadId),
        ),
        (
            r#"{"jsonrpc":"2.0","error":{"code":1.0,"message":"m"},"id":1}"#,
            R(Reason::BadErrorObject),
        ),
        (
            r#"{"jsonrpc":"2.0","error":{"code":"1","message":"m"},"id":1}"#,
            R(Reason::BadErrorObject),
        ),
        (
            r#"{"jsonrpc":"2.0","error":{"code":1,"message":2},"id":1}"#,
            R(Reason::BadErrorObject),
        ),
        (
            r#"{"jsonrpc":"2.0","error":{"code":1},"id":1}"#,
            R(Reason::BadErrorObject),
        ),
        (
            r#"{"jsonrpc":"2.0","error":{"message":"m"},"id":1}"#,
            R(Reason::BadErrorObject),
        ),
        (
            r#"{"jsonrpc":"2.0","error":{},"id":1}"#,
            R(Reason::BadErrorObject),
        ),
        (
            r#"{"jsonrpc":"2.0","error":"boom","id":1}"#,
            R(Reason::BadErrorObject),
        ),
        (
            r#"{"jsonrpc":"2.0","error":null,"id":1}"#,
            R(Reason::BadErrorObject),
        ),
        (
            r#"{"jsonrpc":"2.0","error":{"code":1,"code":1,"message":"m"},"id":1}"#,
            R(Reason::BadErrorObject),
        ),
        (
            r#"{"jsonrpc":"2.0","error":{"code":1,"message":"m","m\u0065ssage":"n"},"id":1}"#,
            R(Reason::BadErrorObject),
        ),
        (
            r#"{"jsonrpc":"2.0","result":1,"error":{"code":1,"message":"m"},"id":1}"#,
            R(Reason::ResultAndError),
        ),
        (r#"{"jsonrpc":"2.0","id":1}"#, R(Reason::NoResultOrError)),
        (
            r#"{"jsonrpc":"2.0","id":1,"params":[]}"#,
            R(Reason::NoResultOrError),
        ),
        (
            r#"{"jsonrpc":"2.0","result":1,"id":1,"params":null}"#,
            K(Kind::Result),
        ),
        (
            r#"{"jsonrpc":"2.0","result":1,"id":1,"params":7}"#,
            K(Kind::Result),
        ),
        // 3.5 unknown members ignored; nested envelope keys never searched
        (
            r#"{"jsonrpc":"2.0","method":"x","extra":{"id":null},"_meta":[1]}"#,
            K(Kind::Notification),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requests":[{"method":"sampling/createMessage","id":null}]}}"#,
            K(Kind::Result),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"jsonrpc":"1.0","result":1,"error":2}}"#,
            K(Kind::Request),
        ),
    ]);
}

#[test]
fn section_4_codes_offsets_and_recovered_ids() {
    /// message, reason, code, offset, recovered id
    type Case<'a> = (&'a str, Reason, i64, Option<usize>, Option<&'a str>);
    let cases: &[Case] = &[
        (r#"{"a":}"#, Reason::Syntax, -32700, Some(5), None),
        ("\u{feff}{}", Reason::Bom, -32700, Some(0), None),
        ("{} x", Reason::TrailingBytes, -32700, Some(3), None),
        ("  ", Reason::Empty, -32700, Some(2), None),
        ("[1]", Reason::Batch, -32600, None, None),
        ("3", Reason::NotAnObject, -32600, None, None),
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"x","params":null}"#,
            Reason::BadParams,
            -32600,
            None,
            Some("7"),
        ),
        (
            r#"{"jsonrpc":"1","id":"q\"","method":"x"}"#,
            Reason::BadVersion,
            -32600,
            None,
            Some(r#""q\"""#),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"id":1,"method":"x"}"#,
            Reason::DuplicateKey,
            -32600,
            None,
            None,
        ),
        (
            r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#,
            Reason::BadId,
            -32600,
            None,
            None,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#,
            Reason::BadId,
            -32600,
            None,
            None,
        ),
        (
            r#"{"jsonrpc":"2.0","id":-0,"result":1,"error":{}}"#,
            Reason::ResultAndError,
            -32600,
            None,
            Some("-0"),
        ),
        (
            r#"{"jsonrpc":"2.0","id":18446744073709551616,"method":1}"#,
            Reason::BadMethod,
            -32600,
            None,
            Some("18446744073709551616"),
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"x","params":[}"#,
            Reason::Syntax,
            -32700,
            Some(47),
            None,
        ),
    ];
    for &(msg, reason, code, offset, id) in cases {
        let err = STRICT.parse(msg.as_bytes()).unwrap_err();
        assert_eq!(err.reason(), reason, "{msg}");
        assert_eq!(err.code(), code, "{msg}");
        assert_eq!(err.offset(), offset, "{msg}");
        assert_eq!(err.id().map(|id| id.raw()), id.map(str::as_bytes), "{msg}");
        let response = err.response().to_vec();
        let id = id.unwrap_or("null");
        let text = if code == -32700 {
            "Parse error"
        } else {
            "Invalid Request"
        };
        assert_eq!(
            String::from_utf8(response).unwrap(),
            format!(
                r#"{{"jsonrpc": "2.0", "id": {id}, "error": {{"code": {code}, "message": "{text}"}}}}"#
            )
        );
    }
    for reason in Reason::ALL {
        assert_eq!(Reason::from_name(reason.as_str()), Some(reason));
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

    let msg = STRICT
        .parse(br#"{"jsonrpc":"2.0","result":null,"id":-0}"#)
        .unwrap();
    assert!(msg.result().unwrap().is_null());
    assert_eq!(msg.id().unwrap().as_i64(), Some(0));
    let msg = STRICT
        .parse(br#"{"jsonrpc":"2.0","error":{"code":1,"message":"m"}}"#)
        .unwrap();
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
        assert!(
            ENVELOPE.parse(msg).is_ok(),
            "{}",
            String::from_utf8_lossy(msg)
        );
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
        assert!(
            err.reason().is_parse_error(),
            "{}",
            String::from_utf8_lossy(msg)
        );
    }
    let deep = format!(
        r#"{{"jsonrpc":"2.0","method":"m","params":{}{}}}"#,
        "[".repeat(1024),
        "]".repeat(1024)
    );
    assert_eq!(
        ENVELOPE.parse(deep.as_bytes()).unwrap_err().reason(),
        Reason::TooDeep
    );
}

#[test]
fn jsonrpc_spec_section_7_examples() {
    check(&[
        (
            r#"{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}"#,
            K(Kind::Request),
        ),
        (
            r#"{"jsonrpc": "2.0", "result": 19, "id": 1}"#,
            K(Kind::Result),
        ),
        (
            r#"{"jsonrpc": "2.0", "method": "subtract", "params": [23, 42], "id": 2}"#,
            K(Kind::Request),
        ),
        (
            r#"{"jsonrpc": "2.0", "result": -19, "id": 2}"#,
            K(Kind::Result),
        ),
        (
            r#"{"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}"#,
            K(Kind::Request),
        ),
        (
            r#"{"jsonrpc": "2.0", "result": 19, "id": 3}"#,
            K(Kind::Result),
        ),
        (
            r#"{"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 42, "subtrahend": 23}, "id": 4}"#,
            K(Kind::Request),
        ),
        (
            r#"{"jsonrpc": "2.0", "result": 19, "id": 4}"#,
            K(Kind::Result),
        ),
        (
            r#"{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}"#,
            K(Kind::Notification),
        ),
        (
            r#"{"jsonrpc": "2.0", "method": "foobar"}"#,
            K(Kind::Notification),
        ),
        (
            r#"{"jsonrpc": "2.0", "method": "foobar", "id": "1"}"#,
            K(Kind::Request),
        ),
        (
            r#"{"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": "1"}"#,
            K(Kind::Error),
        ),
        (
            r#"{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]"#,
            R(Reason::Syntax),
        ),
        (
            r#"{"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}, "id": null}"#,
            K(Kind::Error),
        ),
        (
            r#"{"jsonrpc": "2.0", "method": 1, "params": "bar"}"#,
            R(Reason::BadMethod),
        ),
        (
            r#"{"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null}"#,
            K(Kind::Error),
        ),
        (
            r#"[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},{"jsonrpc": "2.0", "method""#,
            R(Reason::Syntax),
        ),
        ("[]", R(Reason::Batch)),
        ("[1]", R(Reason::Batch)),
        ("[1,2,3]", R(Reason::Batch)),
        (
            r#"{"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]}"#,
            K(Kind::Notification),
        ),
        (
            r#"{"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}"#,
            K(Kind::Notification),
        ),
        (
            r#"{"jsonrpc": "2.0", "result": ["hello", 5], "id": "9"}"#,
            K(Kind::Result),
        ),
    ]);
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
        let got: Vec<V> = p
            .batch(batch)
            .unwrap()
            .map(|r| match r {
                Ok(m) => K(m.kind()),
                Err(e) => R(e.reason()),
            })
            .collect();
        assert_eq!(
            got,
            [
                K(Kind::Request),
                K(Kind::Notification),
                K(Kind::Request),
                R(Reason::BadVersion),
                K(Kind::Request),
                K(Kind::Request),
                R(Reason::NotAnObject),
                R(Reason::NotAnObject),
                R(Reason::NotAnObject),
                R(Reason::NotAnObject),
            ]
        );
        let reason = |m: &[u8]| p.batch(m).map(|_| ()).unwrap_err().reason();
        assert_eq!(reason(b" [ ] "), Reason::EmptyBatch);
        assert_eq!(reason(b"[1,"), Reason::Syntax);
        assert_eq!(
            reason(br#"{"jsonrpc":"2.0","method":"m"}"#),
            Reason::NotAnObject
        );
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
