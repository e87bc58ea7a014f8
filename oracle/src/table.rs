//! The rule book's examples as one table: every example of docs/spec.md §1–§4 and of the
//! JSON-RPC 2.0 specification §7, each with the verdict it must get. The scanner
//! (`tests/spec.rs`) and this oracle (`oracle/tests/spec.rs`) are both checked against every
//! row, so an example is written once and the two can never disagree about it.
//!
//! A row is `(message bytes, verdict, id)`:
//! - the verdict is a kind name (`"request"`, `"notification"`, `"result"`, `"error"`) or
//!   the reason of an invalid message, spelled as docs/spec.md §4 lists it (`"bad_id"`,
//!   `"syntax"`, ...); [`code`] gives the reason's JSON-RPC error code;
//! - the id is the raw id text a gateway echoes: the `id` member of a valid message
//!   (`"null"` for an error response with a null id), the recovered id of a -32600 message,
//!   and `None` when there is none.
//!
//! The oracle judges only the family of a -32700 reason (see [`Verdict::reason`]); the
//! scanner must give the exact one. Examples too long to write out (deep nesting, huge
//! numbers) are built by [`generated`].
//!
//! [`Verdict::reason`]: crate::Verdict::reason

/// One example: message bytes, verdict (kind or reason name), raw id text.
pub type Case = (&'static [u8], &'static str, Option<&'static str>);

/// The kind names, as `Kind::as_str` spells them.
pub const KIND_NAMES: [&str; 5] = ["request", "notification", "result", "error", "invalid"];

/// The -32700 (Parse error) reasons of docs/spec.md §4.
pub const PARSE_ERROR_REASONS: [&str; 7] =
    ["invalid_utf8", "bom", "syntax", "trailing_bytes", "too_deep", "too_large", "empty"];

/// The -32600 (Invalid Request) reasons of docs/spec.md §4.
pub const INVALID_REQUEST_REASONS: [&str; 12] = [
    "not_an_object",
    "batch",
    "empty_batch",
    "duplicate_key",
    "bad_version",
    "bad_method",
    "bad_params",
    "bad_id",
    "result_and_error",
    "no_result_or_error",
    "method_with_response",
    "bad_error_object",
];

/// The JSON-RPC error code of a verdict: -32700 or -32600 for a reason of docs/spec.md §4,
/// `None` for a kind name or an unknown name.
pub fn code(verdict: &str) -> Option<i64> {
    if PARSE_ERROR_REASONS.contains(&verdict) {
        Some(crate::PARSE_ERROR)
    } else if INVALID_REQUEST_REASONS.contains(&verdict) {
        Some(crate::INVALID_REQUEST)
    } else {
        None
    }
}

/// Every table, with the section it comes from.
pub const SECTIONS: [(&str, &[Case]); 5] = [
    ("docs/spec.md §1", KINDS),
    ("docs/spec.md §2", JSON_VALIDITY),
    ("docs/spec.md §3", ENVELOPE_RULES),
    ("docs/spec.md §4", INVALID_REASONS),
    ("JSON-RPC 2.0 §7", JSONRPC_SECTION_7),
];

/// The docs/spec.md §2 examples too long to write out: a 400-digit number, and nesting
/// around the depth limit of 1024 (the top-level object is depth 1), in arrays, in objects,
/// far past the limit, and as brackets inside a string (which do not count). None has an id.
pub fn generated() -> Vec<(Vec<u8>, &'static str, Option<&'static str>)> {
    let params = |value: &str| format!(r#"{{"jsonrpc":"2.0","method":"m","params":{value}}}"#);
    // `params` is depth 2, so `n` brackets inside it reach depth 1 + n.
    let arrays = |n: usize| params(&format!("{}{}", "[".repeat(n), "]".repeat(n)));
    let objects = |n: usize| params(&format!("{}1{}", "{\"a\":".repeat(n), "}".repeat(n)));
    [
        (params(&format!("[{}]", "9".repeat(400))), "notification"),
        (arrays(1023), "notification"),
        (arrays(1024), "too_deep"),
        (objects(1023), "notification"),
        (objects(1024), "too_deep"),
        (params(&format!("[{}]", "[".repeat(200_000))), "too_deep"),
        (arrays(500_000), "too_deep"),
        (params(&format!(r#"["{}"]"#, "[".repeat(5000))), "notification"),
    ]
    .into_iter()
    .map(|(message, verdict)| (message.into_bytes(), verdict, None))
    .collect()
}

/// docs/spec.md §1: one message of each kind, and one that is none.
#[rustfmt::skip] // one case per line, however long
pub const KINDS: &[Case] = &[
    (br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#, "request", Some("1")),
    (br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, "notification", None),
    (br#"{"jsonrpc":"2.0","id":1,"result":{}}"#, "result", Some("1")),
    (br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"x"}}"#, "error", Some("1")),
    (br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#, "error", Some("null")),
    (br#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"x"}}"#, "error", None),
    (br#"{"jsonrpc":"2.0"}"#, "no_result_or_error", None),
];

/// docs/spec.md §2: JSON validity. Every failure is a -32700 reason.
#[rustfmt::skip] // one case per line, however long
pub const JSON_VALIDITY: &[Case] = &[
    // UTF-8 and byte order mark
    (b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"method\":\"m\"}", "bom", None),
    (b"{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":[\"\xC3\xA9\xF0\x9F\x98\x80\xF4\x8F\xBF\xBF\"]}", "notification", None),
    (b"\xFF", "invalid_utf8", None),
    (b"{\"jsonrpc\":\"2.0\",\"method\":\"m\\u00e9\xC3\"}", "invalid_utf8", None),
    (b"{\"jsonrpc\":\"2.0\",\"method\":\"\xED\xA0\x80\"}", "invalid_utf8", None),
    (b"{\"jsonrpc\":\"2.0\",\"method\":\"\xC0\xAF\"}", "invalid_utf8", None),
    (b"{\"jsonrpc\":\"2.0\",\"method\":\"\xF4\x90\x80\x80\"}", "invalid_utf8", None),
    // whitespace
    (b" \t\r\n{\"jsonrpc\" : \"2.0\" ,\n\"method\":\"m\" }\r\n ", "notification", None),
    (b"\x0C{\"jsonrpc\":\"2.0\",\"method\":\"m\"}", "syntax", None),
    (b"{\"jsonrpc\":\"2.0\",\xC2\xA0\"method\":\"m\"}", "syntax", None),
    (b"{\"jsonrpc\":\"2.0\",\xE2\x80\xA8\"method\":\"m\"}", "syntax", None),
    (b"{\"jsonrpc\":\"2.0\",\x00\"method\":\"m\"}", "syntax", None),
    (b" \t\r\n{\"jsonrpc\":\"2.0\",\"method\":\"m\"} \t\r\n", "notification", None),
    // strings
    (b"{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":[\"a\x01b\"]}", "syntax", None),
    (b"{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":[\"a\x1Fb\"]}", "syntax", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":["\"\\\/\b\f\n\r\t\u00e9"]}"#, "notification", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":["\a"]}"#, "syntax", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":["\x41"]}"#, "syntax", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":["\u12"]}"#, "syntax", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":["\ud800"]}"#, "notification", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":["\udc00\ud800x"]}"#, "notification", None),
    (b"{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":[\"a\x01\"]}", "syntax", None),
    (b"{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":[\"tab\there\"]}", "syntax", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":["\x"]}"#, "syntax", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":["\u00e9\u2028\/"]}"#, "notification", None),
    // numbers
    (br#"{"jsonrpc":"2.0","method":"m","params":[0, -0, 1.5, -1.5e10, 1E+2, 1e-2, 0.0]}"#, "notification", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":[1e400]}"#, "notification", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":[01]}"#, "syntax", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":[+1]}"#, "syntax", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":[.5]}"#, "syntax", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":[1.]}"#, "syntax", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":[NaN]}"#, "syntax", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":[Infinity]}"#, "syntax", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":[0x10]}"#, "syntax", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":[-]}"#, "syntax", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":[1e]}"#, "syntax", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":[0x1F]}"#, "syntax", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":[1e400,-0,-0.0e-0,123456789012345678901234567890]}"#, "notification", None),
    // literals
    (br#"{"jsonrpc":"2.0","method":"m","params":[true, false, null]}"#, "notification", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":[tru]}"#, "syntax", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":[nul]}"#, "syntax", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":[True]}"#, "syntax", None),
    // trailing bytes
    (br#"{"jsonrpc":"2.0","method":"m"} {}"#, "trailing_bytes", None),
    (br#"{"jsonrpc":"2.0","method":"m"},"#, "trailing_bytes", None),
    (br#"{"jsonrpc":"2.0","method":"m"}x"#, "trailing_bytes", None),
    (b"{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\x0C", "trailing_bytes", None),
    // grammar
    (br#"{"jsonrpc":"2.0","method":"m",}"#, "syntax", None),
    (br#"{"jsonrpc":"2.0" "method":"m"}"#, "syntax", None),
    (br#"{"jsonrpc":"2.0","method""m"}"#, "syntax", None),
    (br#"{"jsonrpc":"2.0",method:"m"}"#, "syntax", None),
    (br#"{'jsonrpc':'2.0'}"#, "syntax", None),
    (br#"{"jsonrpc":"2.0","method":"m""#, "syntax", None),
    (br#"{"a":}"#, "syntax", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":[[1,]]}"#, "syntax", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":[{"a":1,}]}"#, "syntax", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":[{"a" 1}]}"#, "syntax", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":[{1:1}]}"#, "syntax", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":[[1 2]]}"#, "syntax", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":[]]}"#, "syntax", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":{"a":[1,]}}"#, "syntax", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":{},}"#, "syntax", None),
    // every value is validated, also the ones nobody looks into
    (br#"{"jsonrpc":"2.0","result":[tru],"id":1}"#, "syntax", None),
    (br#"{"jsonrpc":"2.0","error":{"code":1,"message":"m","data":[nul]},"id":1}"#, "syntax", None),
    (br#"{"jsonrpc":"2.0","method":"m","x":{"y":'z'}}"#, "syntax", None),
    (br#" null "#, "not_an_object", None),
    (br#"true"#, "not_an_object", None),
    (br#"1 2"#, "trailing_bytes", None),
    // empty
    (br#""#, "empty", None),
    (b" \t\r\n", "empty", None),
    // top level
    (br#"[]"#, "batch", None),
    (br#"[{"jsonrpc":"2.0","method":"m"}]"#, "batch", None),
    (br#"1"#, "not_an_object", None),
    (br#""x""#, "not_an_object", None),
    (br#"null"#, "not_an_object", None),
    (br#"[1,]"#, "syntax", None),
];

/// docs/spec.md §3: the envelope rules, in their priority order.
#[rustfmt::skip] // one case per line, however long
pub const ENVELOPE_RULES: &[Case] = &[
    // keys are compared after unescaping; case matters
    (br#"{"jsonrpc":"2.0","m\u0065thod":"x"}"#, "notification", None),
    (br#"{"\u006asonrpc":"2.0","id":1,"method":"x"}"#, "request", Some("1")),
    (br#"{"jsonrpc":"2.0","Method":"x"}"#, "no_result_or_error", None),
    (br#"{"jsonrpc":"2.0","method":"x","METHOD":1,"ID":null}"#, "notification", None),
    (br#"{"jsonrpc":"2.0","m\u0065thod":"ping","id":1}"#, "request", Some("1")),
    (br#"{"\u006a\u0073\u006F\u006E\u0072\u0070\u0063":"2.0","method":"ping"}"#, "notification", None),
    (br#"{"jsonrpc":"2.0","Method":"ping","id":1}"#, "no_result_or_error", Some("1")),
    (br#"{"jsonrpc":"2.0","method":"ping","ID":null}"#, "notification", None),
    (br#"{"jsonrpc":"2.0","method":"ping","\ud800":1}"#, "notification", None),
    // 3.1 duplicated envelope keys
    (br#"{"jsonrpc":"2.0","method":"x","method":"y"}"#, "duplicate_key", None),
    (br#"{"jsonrpc":"2.0","method":"x","m\u0065thod":"x"}"#, "duplicate_key", None),
    (br#"{"jsonrpc":"2.0","jsonrpc":"2.0","method":"x"}"#, "duplicate_key", None),
    (br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#, "duplicate_key", None),
    (br#"{"jsonrpc":"2.0","method":"x","params":[],"params":{}}"#, "duplicate_key", None),
    (br#"{"jsonrpc":"2.0","id":1,"result":1,"result":2}"#, "duplicate_key", Some("1")),
    (br#"{"jsonrpc":"2.0","id":1,"result":1,"params":1,"params":2}"#, "duplicate_key", Some("1")),
    (br#"{"jsonrpc":"2.0","method":"x","a":1,"a":2}"#, "notification", None),
    (br#"{"jsonrpc":"2.0","method":"a","method":"b","id":1}"#, "duplicate_key", Some("1")),
    (br#"{"jsonrpc":"2.0","method":"a","m\u0065thod":"a","id":1}"#, "duplicate_key", Some("1")),
    (br#"{"jsonrpc":"2.0","method":"a","id":1,"id":2}"#, "duplicate_key", None),
    (br#"{"jsonrpc":"2.0","jsonrpc":"2.0","method":"a"}"#, "duplicate_key", None),
    (br#"{"jsonrpc":"2.0","method":"a","params":[],"params":[]}"#, "duplicate_key", None),
    (br#"{"jsonrpc":"2.0","result":1,"id":1,"params":1,"params":2}"#, "duplicate_key", Some("1")),
    (br#"{"jsonrpc":"2.0","error":{"code":1,"message":""},"error":{"code":1,"message":""}}"#, "duplicate_key", None),
    (br#"{"jsonrpc":"2.0","method":"a","x":1,"x":2,"Method":3,"Method":4}"#, "notification", None),
    (br#"{"jsonrpc":"1.0","jsonrpc":"1.0","id":"k"}"#, "duplicate_key", Some(r#""k""#)),
    // 3.2 version
    (br#"{"method":"x"}"#, "bad_version", None),
    (br#"{"jsonrpc":"1.0","method":"x"}"#, "bad_version", None),
    (br#"{"jsonrpc":2.0,"method":"x"}"#, "bad_version", None),
    (br#"{"jsonrpc":"2.0 ","method":"x"}"#, "bad_version", None),
    // "2.0" is compared whole: a longer string that starts like it is not it.
    (br#"{"jsonrpc":"2.00","method":"x"}"#, "bad_version", None),
    (br#"{"jsonrpc":null,"method":"x"}"#, "bad_version", None),
    (br#"{"jsonrpc":"2\u002e0","method":"x"}"#, "notification", None),
    (br#"{"jsonrpc":"\u0032.0","method":"x"}"#, "notification", None),
    (br#"{"jsonrpc":"2\u002e0","method":"m"}"#, "notification", None),
    (br#"{"jsonrpc":"\u0032.\u0030","method":"m"}"#, "notification", None),
    (br#"{"method":"m","id":1}"#, "bad_version", Some("1")),
    (br#"{"jsonrpc":"1.0","method":"m","id":"abc"}"#, "bad_version", Some(r#""abc""#)),
    (br#"{"jsonrpc":2.0,"method":"m"}"#, "bad_version", None),
    (br#"{"jsonrpc":"2.0 ","method":"m"}"#, "bad_version", None),
    (br#"{"jsonrpc":"2.00","method":"m"}"#, "bad_version", None),
    (br#"{"jsonrpc":null,"method":"m"}"#, "bad_version", None),
    (br#"{"jsonrpc":"\ud800","method":"m"}"#, "bad_version", None),
    (br#"{"method":1}"#, "bad_version", None),
    // 3.3 method present
    (br#"{"jsonrpc":"2.0","method":1}"#, "bad_method", None),
    (br#"{"jsonrpc":"2.0","method":null,"id":1}"#, "bad_method", Some("1")),
    (br#"{"jsonrpc":"2.0","method":["x"]}"#, "bad_method", None),
    (br#"{"jsonrpc":"2.0","method":"x","result":1,"id":1}"#, "method_with_response", Some("1")),
    (br#"{"jsonrpc":"2.0","method":"x","error":{"code":1,"message":"m"}}"#, "method_with_response", None),
    (br#"{"jsonrpc":"2.0","method":"x","params":null}"#, "bad_params", None),
    (br#"{"jsonrpc":"2.0","method":"x","params":1,"id":1}"#, "bad_params", Some("1")),
    (br#"{"jsonrpc":"2.0","method":"x","params":"a"}"#, "bad_params", None),
    (br#"{"jsonrpc":"2.0","method":"x","params":{}}"#, "notification", None),
    (br#"{"jsonrpc":"2.0","method":"x","params":[]}"#, "notification", None),
    (br#"{"jsonrpc":"2.0","method":"x","id":"a"}"#, "request", Some(r#""a""#)),
    (br#"{"jsonrpc":"2.0","method":"x","id":""}"#, "request", Some(r#""""#)),
    (br#"{"jsonrpc":"2.0","method":"x","id":0}"#, "request", Some("0")),
    (br#"{"jsonrpc":"2.0","method":"x","id":-0}"#, "request", Some("-0")),
    (br#"{"jsonrpc":"2.0","method":"x","id":-12}"#, "request", Some("-12")),
    (br#"{"jsonrpc":"2.0","method":"x","id":123456789012345678901234567890}"#, "request", Some("123456789012345678901234567890")),
    (br#"{"jsonrpc":"2.0","method":"x","id":null}"#, "bad_id", None),
    (br#"{"jsonrpc":"2.0","method":"x","id":1.0}"#, "bad_id", None),
    (br#"{"jsonrpc":"2.0","method":"x","id":1e2}"#, "bad_id", None),
    (br#"{"jsonrpc":"2.0","method":"x","id":true}"#, "bad_id", None),
    (br#"{"jsonrpc":"2.0","method":"x","id":{}}"#, "bad_id", None),
    (br#"{"jsonrpc":"2.0","method":"x","id":[1]}"#, "bad_id", None),
    (br#"{"jsonrpc":"2.0","method":1,"result":1}"#, "bad_method", None),
    (br#"{"jsonrpc":"2.0","method":["m"],"id":"x"}"#, "bad_method", Some(r#""x""#)),
    (br#"{"jsonrpc":"2.0","method":"m","result":1,"id":1}"#, "method_with_response", Some("1")),
    (br#"{"jsonrpc":"2.0","method":"m","error":{"code":1,"message":""},"id":1}"#, "method_with_response", Some("1")),
    (br#"{"jsonrpc":"2.0","method":"m","params":null,"error":{}}"#, "method_with_response", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":null}"#, "bad_params", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":null,"id":null}"#, "bad_params", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":null,"id":18446744073709551617}"#, "bad_params", Some("18446744073709551617")),
    (br#"{"jsonrpc":"2.0","method":"m","params":1,"id":1}"#, "bad_params", Some("1")),
    (br#"{"jsonrpc":"2.0","method":"m","params":"x"}"#, "bad_params", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":true}"#, "bad_params", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":{}}"#, "notification", None),
    (br#"{"jsonrpc":"2.0","method":"m","params":[]}"#, "notification", None),
    (br#"{"jsonrpc":"2.0","method":"m","id":"a\"b"}"#, "request", Some(r#""a\"b""#)),
    (br#"{"jsonrpc":"2.0","method":"m","id":""}"#, "request", Some(r#""""#)),
    (br#"{"jsonrpc":"2.0","method":"m","id":-0}"#, "request", Some("-0")),
    (br#"{"jsonrpc":"2.0","method":"m","id":0}"#, "request", Some("0")),
    (br#"{"jsonrpc":"2.0","method":"m","id":-7}"#, "request", Some("-7")),
    (br#"{"jsonrpc":"2.0","method":"m","id":9007199254740993}"#, "request", Some("9007199254740993")),
    (br#"{"jsonrpc":"2.0","method":"m","id":18446744073709551617}"#, "request", Some("18446744073709551617")),
    (br#"{"jsonrpc":"2.0","method":"m","id":"\ud800"}"#, "request", Some(r#""\ud800""#)),
    (br#"{"jsonrpc":"2.0","method":"m","id":null}"#, "bad_id", None),
    (br#"{"jsonrpc":"2.0","method":"m","id":1.0}"#, "bad_id", None),
    (br#"{"jsonrpc":"2.0","method":"m","id":1e2}"#, "bad_id", None),
    (br#"{"jsonrpc":"2.0","method":"m","id":-0.0}"#, "bad_id", None),
    (br#"{"jsonrpc":"2.0","method":"m","id":true}"#, "bad_id", None),
    (br#"{"jsonrpc":"2.0","method":"m","id":{}}"#, "bad_id", None),
    (br#"{"jsonrpc":"2.0","method":"m","id":[1]}"#, "bad_id", None),
    // 3.4 method absent
    (br#"{"jsonrpc":"2.0","result":null,"id":1}"#, "result", Some("1")),
    (br#"{"jsonrpc":"2.0","result":[1,{"method":"x"}],"id":"z"}"#, "result", Some(r#""z""#)),
    (br#"{"jsonrpc":"2.0","result":1}"#, "bad_id", None),
    (br#"{"jsonrpc":"2.0","result":1,"id":null}"#, "bad_id", None),
    (br#"{"jsonrpc":"2.0","result":1,"id":1.5}"#, "bad_id", None),
    (br#"{"jsonrpc":"2.0","error":{"code":1,"message":"m"},"id":"a"}"#, "error", Some(r#""a""#)),
    (br#"{"jsonrpc":"2.0","error":{"code":-1,"message":"m","data":{"x":[1]}},"id":1}"#, "error", Some("1")),
    (br#"{"jsonrpc":"2.0","error":{"code":99999999999999999999999,"message":""}}"#, "error", None),
    (br#"{"jsonrpc":"2.0","error":{"message":"m","c\u006fde":1,"data":1,"data":2}}"#, "error", None),
    (br#"{"jsonrpc":"2.0","error":{"code":1,"message":"m"},"id":1.5}"#, "bad_id", None),
    (br#"{"jsonrpc":"2.0","error":{"code":1,"message":"m"},"id":[]}"#, "bad_id", None),
    (br#"{"jsonrpc":"2.0","error":{"code":1.0,"message":"m"},"id":1}"#, "bad_error_object", Some("1")),
    (br#"{"jsonrpc":"2.0","error":{"code":"1","message":"m"},"id":1}"#, "bad_error_object", Some("1")),
    (br#"{"jsonrpc":"2.0","error":{"code":1,"message":2},"id":1}"#, "bad_error_object", Some("1")),
    (br#"{"jsonrpc":"2.0","error":{"code":1},"id":1}"#, "bad_error_object", Some("1")),
    (br#"{"jsonrpc":"2.0","error":{"message":"m"},"id":1}"#, "bad_error_object", Some("1")),
    (br#"{"jsonrpc":"2.0","error":{},"id":1}"#, "bad_error_object", Some("1")),
    (br#"{"jsonrpc":"2.0","error":"boom","id":1}"#, "bad_error_object", Some("1")),
    (br#"{"jsonrpc":"2.0","error":null,"id":1}"#, "bad_error_object", Some("1")),
    (br#"{"jsonrpc":"2.0","error":{"code":1,"code":1,"message":"m"},"id":1}"#, "bad_error_object", Some("1")),
    (br#"{"jsonrpc":"2.0","error":{"code":1,"message":"m","m\u0065ssage":"n"},"id":1}"#, "bad_error_object", Some("1")),
    (br#"{"jsonrpc":"2.0","result":1,"error":{"code":1,"message":"m"},"id":1}"#, "result_and_error", Some("1")),
    (br#"{"jsonrpc":"2.0","id":1}"#, "no_result_or_error", Some("1")),
    (br#"{"jsonrpc":"2.0","id":1,"params":[]}"#, "no_result_or_error", Some("1")),
    (br#"{"jsonrpc":"2.0","result":1,"id":1,"params":null}"#, "result", Some("1")),
    (br#"{"jsonrpc":"2.0","result":1,"id":1,"params":7}"#, "result", Some("1")),
    (br#"{"jsonrpc":"2.0","result":{},"id":"x"}"#, "result", Some(r#""x""#)),
    (br#"{"jsonrpc":"2.0","result":1,"id":true}"#, "bad_id", None),
    (br#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"}}"#, "error", None),
    (br#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"x"},"id":null}"#, "error", Some("null")),
    (br#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"x"},"id":-0}"#, "error", Some("-0")),
    (br#"{"jsonrpc":"2.0","error":{"message":"x","data":{"code":"no"},"code":-99999999999999999999999},"id":"q"}"#, "error", Some(r#""q""#)),
    (br#"{"jsonrpc":"2.0","error":{"c\u006fde":0,"m\u0065ssage":"\ud800"},"id":1}"#, "error", Some("1")),
    (br#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"x"},"id":true}"#, "bad_id", None),
    (br#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"x"},"id":1.5}"#, "bad_id", None),
    (br#"{"jsonrpc":"2.0","error":{"code":1.5,"message":"x"},"id":1}"#, "bad_error_object", Some("1")),
    (br#"{"jsonrpc":"2.0","error":{"code":-3.2601e4,"message":"x"},"id":1}"#, "bad_error_object", Some("1")),
    (br#"{"jsonrpc":"2.0","error":{"code":"-32601","message":"x"},"id":1}"#, "bad_error_object", Some("1")),
    (br#"{"jsonrpc":"2.0","error":{"message":"x"},"id":1}"#, "bad_error_object", Some("1")),
    (br#"{"jsonrpc":"2.0","error":{"code":1,"message":null},"id":1}"#, "bad_error_object", Some("1")),
    (br#"{"jsonrpc":"2.0","error":{"code":1,"message":"x","code":1},"id":1}"#, "bad_error_object", Some("1")),
    (br#"{"jsonrpc":"2.0","error":{"code":1,"message":"x","c\u006fde":2},"id":1}"#, "bad_error_object", Some("1")),
    (br#"{"jsonrpc":"2.0","error":{"code":1,"message":"x","message":"y"},"id":1}"#, "bad_error_object", Some("1")),
    (br#"{"jsonrpc":"2.0","error":"oops","id":1}"#, "bad_error_object", Some("1")),
    (br#"{"jsonrpc":"2.0","error":1,"id":true}"#, "bad_error_object", None),
    (br#"{"jsonrpc":"2.0","result":1,"error":{"code":1,"message":""},"id":1}"#, "result_and_error", Some("1")),
    (br#"{"jsonrpc":"2.0","result":1,"error":null,"id":null}"#, "result_and_error", None),
    // 3.5 unknown members are ignored; nested objects are never searched
    (br#"{"jsonrpc":"2.0","method":"x","extra":{"id":null},"_meta":[1]}"#, "notification", None),
    (br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requests":[{"method":"sampling/createMessage","id":null}]}}"#, "result", Some("1")),
    (br#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"jsonrpc":"1.0","result":1,"error":2}}"#, "request", Some("1")),
    (br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"a":{"method":"elicitation/create","params":{}}}}}"#, "result", Some("1")),
    (br#"{"jsonrpc":"2.0","method":"m","params":{"id":null,"result":1,"jsonrpc":"1.0"}}"#, "notification", None),
    (br#"{"jsonrpc":"1.0","params":{"id":1}}"#, "bad_version", None),
];

/// docs/spec.md §4: a reason of each family, and the recovered id: exactly one top-level
/// `id` member, a string or integer literal.
#[rustfmt::skip] // one case per line, however long
pub const INVALID_REASONS: &[Case] = &[
    (b"\xEF\xBB\xBF{}", "bom", None),
    (br#"{} x"#, "trailing_bytes", None),
    (br#"  "#, "empty", None),
    (br#"[1]"#, "batch", None),
    (br#"3"#, "not_an_object", None),
    (br#"{"jsonrpc":"2.0","id":7,"method":"x","params":null}"#, "bad_params", Some("7")),
    (br#"{"jsonrpc":"1","id":"q\"","method":"x"}"#, "bad_version", Some(r#""q\"""#)),
    (br#"{"jsonrpc":"2.0","id":1,"id":1,"method":"x"}"#, "duplicate_key", None),
    (br#"{"jsonrpc":"2.0","id":null,"method":"x"}"#, "bad_id", None),
    (br#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#, "bad_id", None),
    (br#"{"jsonrpc":"2.0","id":-0,"result":1,"error":{}}"#, "result_and_error", Some("-0")),
    (br#"{"jsonrpc":"2.0","id":18446744073709551616,"method":1}"#, "bad_method", Some("18446744073709551616")),
    (br#"{"jsonrpc":"2.0","id":5,"method":"x","params":[}"#, "syntax", None),
    // id recovery
    (br#"{"jsonrpc":"1.0","i\u0064":"x"}"#, "bad_version", Some(r#""x""#)),
    (br#"{"jsonrpc":"1.0","id":-0}"#, "bad_version", Some("-0")),
    (br#"{"jsonrpc":"1.0","id":1e2}"#, "bad_version", None),
    (br#"{"jsonrpc":"1.0","id":null}"#, "bad_version", None),
    (br#"{"jsonrpc":"1.0","id":1,"i\u0064":1}"#, "duplicate_key", None),
];

/// The JSON-RPC 2.0 specification's §7 examples, each message on its own (batches are
/// invalid by default, docs/spec.md §2).
#[rustfmt::skip] // one case per line, however long
pub const JSONRPC_SECTION_7: &[Case] = &[
    (br#"{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}"#, "request", Some("1")),
    (br#"{"jsonrpc": "2.0", "result": 19, "id": 1}"#, "result", Some("1")),
    (br#"{"jsonrpc": "2.0", "method": "subtract", "params": [23, 42], "id": 2}"#, "request", Some("2")),
    (br#"{"jsonrpc": "2.0", "result": -19, "id": 2}"#, "result", Some("2")),
    (br#"{"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}"#, "request", Some("3")),
    (br#"{"jsonrpc": "2.0", "result": 19, "id": 3}"#, "result", Some("3")),
    (br#"{"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 42, "subtrahend": 23}, "id": 4}"#, "request", Some("4")),
    (br#"{"jsonrpc": "2.0", "result": 19, "id": 4}"#, "result", Some("4")),
    (br#"{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}"#, "notification", None),
    (br#"{"jsonrpc": "2.0", "method": "foobar"}"#, "notification", None),
    (br#"{"jsonrpc": "2.0", "method": "foobar", "id": "1"}"#, "request", Some(r#""1""#)),
    (br#"{"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": "1"}"#, "error", Some(r#""1""#)),
    (br#"{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]"#, "syntax", None),
    (br#"{"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}, "id": null}"#, "error", Some("null")),
    (br#"{"jsonrpc": "2.0", "method": 1, "params": "bar"}"#, "bad_method", None),
    (br#"{"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null}"#, "error", Some("null")),
    (br#"[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},{"jsonrpc": "2.0", "method""#, "syntax", None),
    (br#"[1,2,3]"#, "batch", None),
    (br#"{"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]}"#, "notification", None),
    (br#"{"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}"#, "notification", None),
    (br#"{"jsonrpc": "2.0", "result": ["hello", 5], "id": "9"}"#, "result", Some(r#""9""#)),
    (b"[\n  {\"jsonrpc\": \"2.0\", \"method\": \"sum\", \"params\": [1,2,4], \"id\": \"1\"},\n  {\"jsonrpc\": \"2.0\", \"method\"\n]", "syntax", None),
    (br#"[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"}, {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}, {"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"}, {"foo": "boo"}, {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"}, {"jsonrpc": "2.0", "method": "get_data", "id": "9"}]"#, "batch", None),
    (br#"[{"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]}, {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}]"#, "batch", None),
    // the batch elements, one by one
    (br#"{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"}"#, "request", Some(r#""1""#)),
    (br#"{"foo": "boo"}"#, "bad_version", None),
    (br#"{"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"}"#, "request", Some(r#""5""#)),
    (br#"{"jsonrpc": "2.0", "method": "get_data", "id": "9"}"#, "request", Some(r#""9""#)),
    (br#"{"jsonrpc": "2.0", "result": 7, "id": "1"}"#, "result", Some(r#""1""#)),
    (br#"{"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": "5"}"#, "error", Some(r#""5""#)),
];
