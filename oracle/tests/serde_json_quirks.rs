//! What serde_json 1.x actually does on the edges docs/spec.md §2 cares about, pinned down so the
//! oracle's own checks (and the reasons for them) stay true when serde_json is upgraded.
//! Each test says what serde_json does, then what the oracle does about it.

use rpcscan_oracle::validate_json;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use serde_json::Value;

fn raw(bytes: &[u8]) -> Result<&RawValue, serde_json::Error> {
    serde_json::from_slice::<&RawValue>(bytes)
}

fn nested(n: usize) -> String {
    format!("{}{}", "[".repeat(n), "]".repeat(n))
}

#[test]
fn bom_is_rejected_by_serde_json_and_by_the_oracle() {
    assert!(raw(b"\xEF\xBB\xBF{}").is_err());
    assert!(serde_json::from_str::<Value>("\u{feff}{}").is_err());
    assert!(!validate_json(b"\xEF\xBB\xBF{}"));
}

#[test]
fn invalid_utf8_is_only_caught_where_serde_json_builds_a_str() {
    // Raw values and Values check UTF-8 ...
    assert!(raw(b"[\"\xFF\"]").is_err());
    assert!(serde_json::from_slice::<Value>(b"[\"\xFF\"]").is_err());
    // ... but skipping a value does not: `IgnoredAny` accepts invalid UTF-8 in strings.
    assert!(serde_json::from_slice::<IgnoredAny>(b"[\"\xFF\"]").is_ok());
    assert!(serde_json::from_slice::<IgnoredAny>(b"[\"\xED\xA0\x80\"]").is_ok());
    // The oracle checks the whole input with `str::from_utf8` first.
    for bad in [
        &b"[\"\xFF\"]"[..],
        b"[\"\xED\xA0\x80\"]",     // encoded surrogate U+D800
        b"[\"\xC0\xAF\"]",         // overlong '/'
        b"[\"\xF4\x90\x80\x80\"]", // above U+10FFFF
        b"[\"\xE2\x82\"]",         // truncated
        b"[1]\xFF",
    ] {
        assert!(!validate_json(bad), "{bad:?}");
    }
}

#[test]
fn raw_control_bytes_in_strings() {
    // Rejected on every path that validates ...
    assert!(raw(b"[\"a\x01b\"]").is_err());
    assert!(raw(b"{\"a\x1Fb\":1}").is_err());
    assert!(serde_json::from_slice::<IgnoredAny>(b"[\"a\x00b\"]").is_err());
    // ... but `deserialize_bytes` (`parse_str_raw`) skips the control-byte check. The oracle
    // never reads strings as bytes: keys and values are `&RawValue`.
    assert_eq!(serde_json::from_slice::<&[u8]>(b"\"a\x01b\"").ok(), Some(&b"a\x01b"[..]));
    assert!(!validate_json(b"{\"a\":\"\x01\"}"));
    assert!(!validate_json(b"{\"a\x7F\":\"\x1F\"}"));
    assert!(validate_json(b"{\"a\x7F\":1}"), "DEL is not a control byte in JSON");
}

#[test]
fn lone_surrogate_escapes_need_raw_values() {
    assert!(serde_json::from_str::<Value>(r#"["\ud800"]"#).is_err());
    assert!(serde_json::from_str::<String>(r#""\udc00""#).is_err());
    assert_eq!(raw(br#""\ud800""#).unwrap().get(), r#""\ud800""#);
    // As a map key too: keys are read as `&RawValue` by the oracle.
    assert!(validate_json(br#"{"\ud800":1,"\uDFAA\u0041":2}"#));
    // Bad escapes are still errors.
    for bad in [&br#""\x""#[..], br#""\u12""#, br#""\u12G4""#, br#""\U0041""#, br#""\'""#] {
        assert!(raw(bad).is_err(), "{bad:?}");
        assert!(!validate_json(bad));
    }
}

#[test]
fn numbers_keep_their_text_as_raw_values() {
    assert!(serde_json::from_str::<Value>("1e400").is_err());
    assert!(serde_json::from_str::<Value>("-0").unwrap().is_f64());
    assert!(serde_json::from_str::<Value>("18446744073709551616").unwrap().is_f64());
    for text in ["1e400", "-1e400", "1e-400", "-0", "18446744073709551616", &"7".repeat(400)] {
        assert_eq!(raw(text.as_bytes()).unwrap().get(), text);
        assert!(validate_json(text.as_bytes()));
    }
    for bad in ["01", "-01", "+1", ".5", "1.", "1e", "1e+", "-", "NaN", "Infinity", "0x10", "1.e2"]
    {
        assert!(raw(bad.as_bytes()).is_err(), "{bad}");
        assert!(!validate_json(bad.as_bytes()), "{bad}");
    }
}

#[test]
fn trailing_commas_and_trailing_bytes() {
    for bad in ["[1,]", "{\"a\":1,}", "{} {}", "{},", "{}x", "1 2", "{}\u{0C}", "{}\0"] {
        assert!(raw(bad.as_bytes()).is_err(), "{bad:?}");
        assert!(!validate_json(bad.as_bytes()), "{bad:?}");
    }
    assert!(validate_json(b" \t\r\n{} \t\r\n"));
}

#[test]
fn whitespace_is_only_space_tab_cr_lf() {
    for bad in ["\u{0C}{}", "\u{A0}{}", "{\u{2028}}", "[1,\u{0B}2]", "\0{}"] {
        assert!(raw(bad.as_bytes()).is_err(), "{bad:?}");
        assert!(!validate_json(bad.as_bytes()), "{bad:?}");
    }
    assert!(!validate_json(b""));
    assert!(!validate_json(b" \n"));
}

#[test]
fn depth_value_stops_before_128_raw_value_never_stops() {
    assert!(serde_json::from_str::<Value>(&nested(127)).is_ok());
    assert!(serde_json::from_str::<Value>(&nested(128)).is_err());
    // `&RawValue` skips iteratively with no limit at all: the oracle's byte scan adds one.
    assert!(raw(nested(100_000).as_bytes()).is_ok());
    assert!(validate_json(nested(1024).as_bytes()));
    assert!(!validate_json(nested(1025).as_bytes()));
    assert!(!validate_json(nested(100_000).as_bytes()));
    // Unclosed deep input never reaches serde_json either.
    assert!(!validate_json("[".repeat(1_000_000).as_bytes()));
}

#[test]
fn duplicate_keys_are_merged_by_value_but_seen_by_the_oracle() {
    let v: Value = serde_json::from_str(r#"{"id":1,"id":2}"#).unwrap();
    assert_eq!(v["id"], 2);
    let verdict = rpcscan_oracle::classify(br#"{"jsonrpc":"2.0","method":"m","id":1,"id":2}"#);
    assert_eq!(verdict.reason, Some("duplicate_key"));
}

#[test]
fn raw_values_exclude_surrounding_whitespace() {
    assert_eq!(raw(b" \n[1, 2]\t ").unwrap().get(), "[1, 2]");
    let members = rpcscan_oracle::json::members("{ \"a\" :\t\"x\" , \"b\":{ } }").unwrap();
    assert_eq!(members[0].raw_key, "\"a\"");
    assert_eq!(members[0].value, "\"x\"");
    assert_eq!(members[1].value, "{ }");
}
