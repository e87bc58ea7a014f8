//! The oracle against the rule book: every example of SPEC §2–§4 and of the JSON-RPC 2.0
//! specification §7, one case per line: input, kind, reason, id (raw text).

use rpcscan_oracle::{classify, Kind, Verdict};

/// (input, kind, reason, recovered or echoed id)
type Case = (
    &'static [u8],
    &'static str,
    Option<&'static str>,
    Option<&'static str>,
);

const JSONRPC_SECTION_7: &[Case] = &[
    (br#"{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}"#, "request", None, Some("1")),
    (br#"{"jsonrpc": "2.0", "result": 19, "id": 1}"#, "result", None, Some("1")),
    (br#"{"jsonrpc": "2.0", "method": "subtract", "params": [23, 42], "id": 2}"#, "request", None, Some("2")),
    (br#"{"jsonrpc": "2.0", "result": -19, "id": 2}"#, "result", None, Some("2")),
    (br#"{"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}"#, "request", None, Some("3")),
    (br#"{"jsonrpc": "2.0", "result": 19, "id": 3}"#, "result", None, Some("3")),
    (br#"{"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 42, "subtrahend": 23}, "id": 4}"#, "request", None, Some("4")),
    (br#"{"jsonrpc": "2.0", "result": 19, "id": 4}"#, "result", None, Some("4")),
    (br#"{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}"#, "notification", None, None),
    (br#"{"jsonrpc": "2.0", "method": "foobar"}"#, "notification", None, None),
    (br#"{"jsonrpc": "2.0", "method": "foobar", "id": "1"}"#, "request", None, Some(r#""1""#)),
    (br#"{"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": "1"}"#, "error", None, Some(r#""1""#)),
    (br#"{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]"#, "invalid", Some("parse"), None),
    (br#"{"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}, "id": null}"#, "error", None, Some("null")),
    (br#"{"jsonrpc": "2.0", "method": 1, "params": "bar"}"#, "invalid", Some("bad_method"), None),
    (br#"{"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null}"#, "error", None, Some("null")),
    (b"[\n  {\"jsonrpc\": \"2.0\", \"method\": \"sum\", \"params\": [1,2,4], \"id\": \"1\"},\n  {\"jsonrpc\": \"2.0\", \"method\"\n]", "invalid", Some("parse"), None),
    (b"[]", "invalid", Some("batch"), None),
    (b"[1]", "invalid", Some("batch"), None),
    (b"[1,2,3]", "invalid", Some("batch"), None),
    (br#"[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"}, {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}, {"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"}, {"foo": "boo"}, {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"}, {"jsonrpc": "2.0", "method": "get_data", "id": "9"}]"#, "invalid", Some("batch"), None),
    (br#"[{"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]}, {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}]"#, "invalid", Some("batch"), None),
    // The batch elements, one by one.
    (br#"{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"}"#, "request", None, Some(r#""1""#)),
    (br#"{"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}"#, "notification", None, None),
    (br#"{"foo": "boo"}"#, "invalid", Some("bad_version"), None),
    (br#"{"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"}"#, "request", None, Some(r#""5""#)),
    (br#"{"jsonrpc": "2.0", "method": "get_data", "id": "9"}"#, "request", None, Some(r#""9""#)),
    (br#"{"jsonrpc": "2.0", "result": 7, "id": "1"}"#, "result", None, Some(r#""1""#)),
    (br#"{"jsonrpc": "2.0", "result": ["hello", 5], "id": "9"}"#, "result", None, Some(r#""9""#)),
    (br#"{"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": "5"}"#, "error", None, Some(r#""5""#)),
];

/// SPEC §2: JSON validity. Every failure is the -32700 family.
const JSON_VALIDITY: &[Case] = &[
    (b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"method\":\"m\"}", "invalid", Some("parse"), None),
    (br#"{"a":}"#, "invalid", Some("parse"), None),
    (b"\xFF", "invalid", Some("parse"), None),
    (b"{\"jsonrpc\":\"2.0\",\"method\":\"m\\u00e9\xC3\"}", "invalid", Some("parse"), None),
    (b"{\"jsonrpc\":\"2.0\",\"method\":\"\xED\xA0\x80\"}", "invalid", Some("parse"), None),
    (b"{\"jsonrpc\":\"2.0\",\"method\":\"\xC0\xAF\"}", "invalid", Some("parse"), None),
    (b"{\"jsonrpc\":\"2.0\",\"method\":\"\xF4\x90\x80\x80\"}", "invalid", Some("parse"), None),
    (br#"{"jsonrpc":"2.0","method":"m"} {}"#, "invalid", Some("parse"), None),
    (br#"{"jsonrpc":"2.0","method":"m"},"#, "invalid", Some("parse"), None),
    (b"{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\x0C", "invalid", Some("parse"), None),
    (b"{\"jsonrpc\":\"2.0\",\x00\"method\":\"m\"}", "invalid", Some("parse"), None),
    (b"{\"jsonrpc\":\"2.0\",\xC2\xA0\"method\":\"m\"}", "invalid", Some("parse"), None),
    (b"{\"jsonrpc\":\"2.0\",\xE2\x80\xA8\"method\":\"m\"}", "invalid", Some("parse"), None),
    (b" \t\r\n{\"jsonrpc\":\"2.0\",\"method\":\"m\"} \t\r\n", "notification", None, None),
    (b"{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":[\"a\x01\"]}", "invalid", Some("parse"), None),
    (b"{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":[\"tab\there\"]}", "invalid", Some("parse"), None),
    (br#"{"jsonrpc":"2.0","method":"m","params":["\ud800"]}"#, "notification", None, None),
    (br#"{"jsonrpc":"2.0","method":"m","params":["\x"]}"#, "invalid", Some("parse"), None),
    (br#"{"jsonrpc":"2.0","method":"m","params":["\u00e9\u2028\/"]}"#, "notification", None, None),
    (br#"{"jsonrpc":"2.0","method":"m","params":[01]}"#, "invalid", Some("parse"), None),
    (br#"{"jsonrpc":"2.0","method":"m","params":[+1]}"#, "invalid", Some("parse"), None),
    (br#"{"jsonrpc":"2.0","method":"m","params":[.5]}"#, "invalid", Some("parse"), None),
    (br#"{"jsonrpc":"2.0","method":"m","params":[1.]}"#, "invalid", Some("parse"), None),
    (br#"{"jsonrpc":"2.0","method":"m","params":[NaN]}"#, "invalid", Some("parse"), None),
    (br#"{"jsonrpc":"2.0","method":"m","params":[Infinity]}"#, "invalid", Some("parse"), None),
    (br#"{"jsonrpc":"2.0","method":"m","params":[0x1F]}"#, "invalid", Some("parse"), None),
    (br#"{"jsonrpc":"2.0","method":"m","params":[1e400,-0,-0.0e-0,123456789012345678901234567890]}"#, "notification", None, None),
    (br#"{"jsonrpc":"2.0","method":"m","params":{"a":[1,]}}"#, "invalid", Some("parse"), None),
    (br#"{"jsonrpc":"2.0","method":"m","params":{},}"#, "invalid", Some("parse"), None),
    // Every value is validated, even the ones nobody looks into.
    (br#"{"jsonrpc":"2.0","result":[tru],"id":1}"#, "invalid", Some("parse"), None),
    (br#"{"jsonrpc":"2.0","error":{"code":1,"message":"m","data":[nul]},"id":1}"#, "invalid", Some("parse"), None),
    (br#"{"jsonrpc":"2.0","method":"m","x":{"y":'z'}}"#, "invalid", Some("parse"), None),
    (b"", "invalid", Some("empty"), None),
    (b" \t\r\n", "invalid", Some("empty"), None),
    (b"1", "invalid", Some("not_an_object"), None),
    (b"\"x\"", "invalid", Some("not_an_object"), None),
    (b" null ", "invalid", Some("not_an_object"), None),
    (b"true", "invalid", Some("not_an_object"), None),
    (b"1 2", "invalid", Some("parse"), None),
    (b"[1,]", "invalid", Some("parse"), None),
];

/// SPEC §3 and §4: envelope rules, priority order and id recovery.
const ENVELOPE: &[Case] = &[
    // Keys compared after unescaping, case-sensitive.
    (br#"{"jsonrpc":"2.0","m\u0065thod":"ping","id":1}"#, "request", None, Some("1")),
    (br#"{"\u006a\u0073\u006F\u006E\u0072\u0070\u0063":"2.0","method":"ping"}"#, "notification", None, None),
    (br#"{"jsonrpc":"2.0","Method":"ping","id":1}"#, "invalid", Some("no_result_or_error"), Some("1")),
    (br#"{"jsonrpc":"2.0","method":"ping","ID":null}"#, "notification", None, None),
    (br#"{"jsonrpc":"2.0","method":"ping","\ud800":1}"#, "notification", None, None),
    // 3.1 duplicates.
    (br#"{"jsonrpc":"2.0","method":"a","method":"b","id":1}"#, "invalid", Some("duplicate_key"), Some("1")),
    (br#"{"jsonrpc":"2.0","method":"a","m\u0065thod":"a","id":1}"#, "invalid", Some("duplicate_key"), Some("1")),
    (br#"{"jsonrpc":"2.0","method":"a","id":1,"id":2}"#, "invalid", Some("duplicate_key"), None),
    (br#"{"jsonrpc":"2.0","jsonrpc":"2.0","method":"a"}"#, "invalid", Some("duplicate_key"), None),
    (br#"{"jsonrpc":"2.0","method":"a","params":[],"params":[]}"#, "invalid", Some("duplicate_key"), None),
    (br#"{"jsonrpc":"2.0","result":1,"id":1,"params":1,"params":2}"#, "invalid", Some("duplicate_key"), Some("1")),
    (br#"{"jsonrpc":"2.0","error":{"code":1,"message":""},"error":{"code":1,"message":""}}"#, "invalid", Some("duplicate_key"), None),
    (br#"{"jsonrpc":"2.0","method":"a","x":1,"x":2,"Method":3,"Method":4}"#, "notification", None, None),
    (br#"{"jsonrpc":"1.0","jsonrpc":"1.0","id":"k"}"#, "invalid", Some("duplicate_key"), Some(r#""k""#)),
    // 3.2 version.
    (br#"{"jsonrpc":"2\u002e0","method":"m"}"#, "notification", None, None),
    (br#"{"jsonrpc":"\u0032.\u0030","method":"m"}"#, "notification", None, None),
    (br#"{"method":"m","id":1}"#, "invalid", Some("bad_version"), Some("1")),
    (br#"{"jsonrpc":"1.0","method":"m","id":"abc"}"#, "invalid", Some("bad_version"), Some(r#""abc""#)),
    (br#"{"jsonrpc":2.0,"method":"m"}"#, "invalid", Some("bad_version"), None),
    (br#"{"jsonrpc":"2.0 ","method":"m"}"#, "invalid", Some("bad_version"), None),
    (br#"{"jsonrpc":"2.00","method":"m"}"#, "invalid", Some("bad_version"), None),
    (br#"{"jsonrpc":null,"method":"m"}"#, "invalid", Some("bad_version"), None),
    (br#"{"jsonrpc":"\ud800","method":"m"}"#, "invalid", Some("bad_version"), None),
    (br#"{"method":1}"#, "invalid", Some("bad_version"), None),
    // 3.3 method present.
    (br#"{"jsonrpc":"2.0","method":1,"result":1}"#, "invalid", Some("bad_method"), None),
    (br#"{"jsonrpc":"2.0","method":null,"id":1}"#, "invalid", Some("bad_method"), Some("1")),
    (br#"{"jsonrpc":"2.0","method":["m"],"id":"x"}"#, "invalid", Some("bad_method"), Some(r#""x""#)),
    (br#"{"jsonrpc":"2.0","method":"m","result":1,"id":1}"#, "invalid", Some("method_with_response"), Some("1")),
    (br#"{"jsonrpc":"2.0","method":"m","error":{"code":1,"message":""},"id":1}"#, "invalid", Some("method_with_response"), Some("1")),
    (br#"{"jsonrpc":"2.0","method":"m","params":null,"error":{}}"#, "invalid", Some("method_with_response"), None),
    (br#"{"jsonrpc":"2.0","method":"m","params":null}"#, "invalid", Some("bad_params"), None),
    (br#"{"jsonrpc":"2.0","method":"m","params":null,"id":null}"#, "invalid", Some("bad_params"), None),
    (br#"{"jsonrpc":"2.0","method":"m","params":null,"id":18446744073709551617}"#, "invalid", Some("bad_params"), Some("18446744073709551617")),
    (br#"{"jsonrpc":"2.0","method":"m","params":1,"id":1}"#, "invalid", Some("bad_params"), Some("1")),
    (br#"{"jsonrpc":"2.0","method":"m","params":"x"}"#, "invalid", Some("bad_params"), None),
    (br#"{"jsonrpc":"2.0","method":"m","params":true}"#, "invalid", Some("bad_params"), None),
    (br#"{"jsonrpc":"2.0","method":"m","params":{}}"#, "notification", None, None),
    (br#"{"jsonrpc":"2.0","method":"m","params":[]}"#, "notification", None, None),
    (br#"{"jsonrpc":"2.0","method":"m","id":"a\"b"}"#, "request", None, Some(r#""a\"b""#)),
    (br#"{"jsonrpc":"2.0","method":"m","id":""}"#, "request", None, Some(r#""""#)),
    (br#"{"jsonrpc":"2.0","method":"m","id":-0}"#, "request", None, Some("-0")),
    (br#"{"jsonrpc":"2.0","method":"m","id":0}"#, "request", None, Some("0")),
    (br#"{"jsonrpc":"2.0","method":"m","id":-7}"#, "request", None, Some("-7")),
    (br#"{"jsonrpc":"2.0","method":"m","id":9007199254740993}"#, "request", None, Some("9007199254740993")),
    (br#"{"jsonrpc":"2.0","method":"m","id":18446744073709551617}"#, "request", None, Some("18446744073709551617")),
    (br#"{"jsonrpc":"2.0","method":"m","id":"\ud800"}"#, "request", None, Some(r#""\ud800""#)),
    (br#"{"jsonrpc":"2.0","method":"m","id":null}"#, "invalid", Some("bad_id"), None),
    (br#"{"jsonrpc":"2.0","method":"m","id":1.0}"#, "invalid", Some("bad_id"), None),
    (br#"{"jsonrpc":"2.0","method":"m","id":1e2}"#, "invalid", Some("bad_id"), None),
    (br#"{"jsonrpc":"2.0","method":"m","id":-0.0}"#, "invalid", Some("bad_id"), None),
    (br#"{"jsonrpc":"2.0","method":"m","id":true}"#, "invalid", Some("bad_id"), None),
    (br#"{"jsonrpc":"2.0","method":"m","id":{}}"#, "invalid", Some("bad_id"), None),
    (br#"{"jsonrpc":"2.0","method":"m","id":[1]}"#, "invalid", Some("bad_id"), None),
    // 3.4 method absent.
    (br#"{"jsonrpc":"2.0","result":null,"id":1}"#, "result", None, Some("1")),
    (br#"{"jsonrpc":"2.0","result":{},"id":"x"}"#, "result", None, Some(r#""x""#)),
    (br#"{"jsonrpc":"2.0","result":1}"#, "invalid", Some("bad_id"), None),
    (br#"{"jsonrpc":"2.0","result":1,"id":null}"#, "invalid", Some("bad_id"), None),
    (br#"{"jsonrpc":"2.0","result":1,"id":1.5}"#, "invalid", Some("bad_id"), None),
    (br#"{"jsonrpc":"2.0","result":1,"id":true}"#, "invalid", Some("bad_id"), None),
    (br#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"}}"#, "error", None, None),
    (br#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"x"},"id":null}"#, "error", None, Some("null")),
    (br#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"x"},"id":-0}"#, "error", None, Some("-0")),
    (br#"{"jsonrpc":"2.0","error":{"message":"x","data":{"code":"no"},"code":-99999999999999999999999},"id":"q"}"#, "error", None, Some(r#""q""#)),
    (br#"{"jsonrpc":"2.0","error":{"c\u006fde":0,"m\u0065ssage":"\ud800"},"id":1}"#, "error", None, Some("1")),
    (br#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"x"},"id":true}"#, "invalid", Some("bad_id"), None),
    (br#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"x"},"id":1.5}"#, "invalid", Some("bad_id"), None),
    (br#"{"jsonrpc":"2.0","error":{"code":1.5,"message":"x"},"id":1}"#, "invalid", Some("bad_error_object"), Some("1")),
    (br#"{"jsonrpc":"2.0","error":{"code":-3.2601e4,"message":"x"},"id":1}"#, "invalid", Some("bad_error_object"), Some("1")),
    (br#"{"jsonrpc":"2.0","error":{"code":"-32601","message":"x"},"id":1}"#, "invalid", Some("bad_error_object"), Some("1")),
    (br#"{"jsonrpc":"2.0","error":{"message":"x"},"id":1}"#, "invalid", Some("bad_error_object"), Some("1")),
    (br#"{"jsonrpc":"2.0","error":{"code":1},"id":1}"#, "invalid", Some("bad_error_object"), Some("1")),
    (br#"{"jsonrpc":"2.0","error":{"code":1,"message":null},"id":1}"#, "invalid", Some("bad_error_object"), Some("1")),
    (br#"{"jsonrpc":"2.0","error":{"code":1,"message":"x","code":1},"id":1}"#, "invalid", Some("bad_error_object"), Some("1")),
    (br#"{"jsonrpc":"2.0","error":{"code":1,"message":"x","c\u006fde":2},"id":1}"#, "invalid", Some("bad_error_object"), Some("1")),
    (br#"{"jsonrpc":"2.0","error":{"code":1,"message":"x","message":"y"},"id":1}"#, "invalid", Some("bad_error_object"), Some("1")),
    (br#"{"jsonrpc":"2.0","error":"oops","id":1}"#, "invalid", Some("bad_error_object"), Some("1")),
    (br#"{"jsonrpc":"2.0","error":null,"id":1}"#, "invalid", Some("bad_error_object"), Some("1")),
    (br#"{"jsonrpc":"2.0","error":1,"id":true}"#, "invalid", Some("bad_error_object"), None),
    (br#"{"jsonrpc":"2.0","result":1,"error":{"code":1,"message":""},"id":1}"#, "invalid", Some("result_and_error"), Some("1")),
    (br#"{"jsonrpc":"2.0","result":1,"error":null,"id":null}"#, "invalid", Some("result_and_error"), None),
    (br#"{"jsonrpc":"2.0","id":1}"#, "invalid", Some("no_result_or_error"), Some("1")),
    (br#"{"jsonrpc":"2.0"}"#, "invalid", Some("no_result_or_error"), None),
    (br#"{"jsonrpc":"2.0","result":1,"id":1,"params":null}"#, "result", None, Some("1")),
    // 3.5 nested objects are never searched.
    (br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"a":{"method":"elicitation/create","params":{}}}}}"#, "result", None, Some("1")),
    (br#"{"jsonrpc":"2.0","method":"m","params":{"id":null,"result":1,"jsonrpc":"1.0"}}"#, "notification", None, None),
    (br#"{"jsonrpc":"1.0","params":{"id":1}}"#, "invalid", Some("bad_version"), None),
    // §4 id recovery: exactly one top-level id, a string or integer literal.
    (br#"{"jsonrpc":"1.0","i\u0064":"x"}"#, "invalid", Some("bad_version"), Some(r#""x""#)),
    (br#"{"jsonrpc":"1.0","id":-0}"#, "invalid", Some("bad_version"), Some("-0")),
    (br#"{"jsonrpc":"1.0","id":1e2}"#, "invalid", Some("bad_version"), None),
    (br#"{"jsonrpc":"1.0","id":null}"#, "invalid", Some("bad_version"), None),
    (br#"{"jsonrpc":"1.0","id":1,"i\u0064":1}"#, "invalid", Some("duplicate_key"), None),
];

fn kind_name(v: &Verdict) -> &'static str {
    v.kind.as_str()
}

fn check(table: &[Case]) {
    let mut failures = Vec::new();
    for &(input, kind, reason, id) in table {
        let v = classify(input);
        let expected_code = match reason {
            None => None,
            Some("parse" | "empty") => Some(-32700),
            Some(_) => Some(-32600),
        };
        if kind_name(&v) != kind
            || v.reason != reason
            || v.id.as_deref() != id
            || v.code != expected_code
        {
            failures.push(format!(
                "{}\n   want {kind} {reason:?} id={id:?}\n   got  {} {:?} id={:?} code={:?}",
                String::from_utf8_lossy(input),
                kind_name(&v),
                v.reason,
                v.id,
                v.code
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn jsonrpc_specification_section_7() {
    check(JSONRPC_SECTION_7);
}

#[test]
fn spec_json_validity() {
    check(JSON_VALIDITY);
}

#[test]
fn spec_envelope_rules() {
    check(ENVELOPE);
}

#[test]
fn depth_limit_counts_the_top_level_object() {
    let message = |containers: usize| {
        format!(
            r#"{{"jsonrpc":"2.0","method":"m","params":{}{}}}"#,
            "[".repeat(containers),
            "]".repeat(containers)
        )
    };
    assert_eq!(classify(message(1023).as_bytes()).kind, Kind::Notification);
    let too_deep = classify(message(1024).as_bytes());
    assert_eq!(
        (too_deep.kind, too_deep.code),
        (Kind::Invalid, Some(-32700))
    );
    assert_eq!(classify(message(500_000).as_bytes()).code, Some(-32700));
    // Brackets inside strings do not count.
    let in_string = format!(
        r#"{{"jsonrpc":"2.0","method":"m","params":["{}"]}}"#,
        "[".repeat(5000)
    );
    assert_eq!(classify(in_string.as_bytes()).kind, Kind::Notification);
}

#[test]
fn method_and_error_code_are_exposed() {
    let v = classify(br#"{"jsonrpc":"2.0","method":"tools\/c\u0061ll","id":1}"#);
    assert_eq!(v.method.as_deref(), Some("tools/call"));
    let v = classify(br#"{"jsonrpc":"2.0","method":"\ud800"}"#);
    assert_eq!((v.kind, v.method), (Kind::Notification, None));
    let v = classify(br#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"x"},"id":1}"#);
    assert_eq!((v.error_code.as_deref(), v.method), (Some("-32601"), None));
    let v = classify(br#"{"jsonrpc":"2.0","result":1,"id":1}"#);
    assert_eq!(
        (v.error_code, v.method, v.code, v.reason),
        (None, None, None, None)
    );
}

#[test]
fn kind_names() {
    let names: Vec<&str> = [
        Kind::Request,
        Kind::Notification,
        Kind::Result,
        Kind::Error,
        Kind::Invalid,
    ]
    .iter()
    .map(Kind::as_str)
    .collect();
    assert_eq!(
        names,
        ["request", "notification", "result", "error", "invalid"]
    );
}
