//! Differential property test (docs/spec.md §8): rpcscan against the serde_json-based oracle on
//! generated nasty messages and byte mutations of them. Kind, code, -32600 reason, ids,
//! decoded methods and error codes must agree; envelope mode must agree with strict mode on
//! every valid JSON text.

use proptest::prelude::*;
use rpcscan::{Parser, Validation};
use rpcscan_oracle as oracle;
use rpcscan_testkit::check;

const ENVELOPE: Parser = Parser::new().validation(Validation::Envelope);

/// Asserts rpcscan and the oracle agree on `msg` (the fuzz targets' own assertion,
/// `rpcscan_testkit::check`), and envelope mode with strict mode; returns the oracle's verdict.
fn agree(msg: &[u8]) -> oracle::Verdict {
    let want = oracle::classify(msg);
    let got = rpcscan::parse(msg);
    check::agree(msg, &got, &want);
    let shown = String::from_utf8_lossy(msg);
    if want.code != Some(-32700) {
        let env = ENVELOPE.parse(msg);
        if let Ok(m) = &env {
            check::params_name_agrees(m);
        }
        assert_eq!(
            env.map(|m| m.kind()).map_err(|e| e.reason()),
            got.map(|m| m.kind()).map_err(|e| e.reason()),
            "envelope vs strict on {shown}"
        );
    } else {
        // On bytes that are not JSON, envelope mode may differ but must return.
        let _ = ENVELOPE.parse(msg);
    }
    want
}

proptest! {
    // Under miri (.ci/miri.sh) a handful of cases: each is interpreted, ~10^4 times slower.
    #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 12 } else { 6_000 }, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn generated_messages_agree(seed in any::<u64>()) {
        agree(&oracle::gen::message(seed));
    }

    #[test]
    fn mutated_messages_agree(seed in any::<u64>(), mutation in any::<u64>()) {
        agree(&oracle::gen::mutate(mutation, &oracle::gen::message(seed)));
    }

    #[test]
    fn arbitrary_bytes_agree(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        agree(&bytes);
    }
}

/// Member keys of `params` for [`params_name_is_what_get_finds`]: `name` and `_meta`, their
/// escaped forms, and keys that nearly are.
const KEYS: [&str; 17] = [
    r#""_meta""#,
    r#""\u005fmeta""#,
    r#""_met\u0061""#,
    r#""_met""#,
    r#""_metas""#,
    r#""meta""#,
    r#""_\\meta""#,
    r#""name""#,
    r#""n\u0061me""#,
    r#""\u006eame""#,
    r#""na\u006De""#,
    r#""nam""#,
    r#""names""#,
    r#""Name""#,
    r#""n\\ame""#,
    r#""arguments""#,
    r#""""#,
];

/// Values for [`params_name_is_what_get_finds`], `name`s nested in some.
const VALUES: [&str; 12] = [
    r#""echo""#,
    r#""a\"b""#,
    "1",
    "-1.5e3",
    "true",
    "null",
    "{}",
    "[]",
    r#"{"name":"inner"}"#,
    r#"["name",{"name":2}]"#,
    r#"{"a":{"name":1},"name":[3]}"#,
    r#""name""#,
];

proptest! {
    #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 12 } else { 3_000 }, failure_persistence: None, ..ProptestConfig::default() })]

    /// `params.name` and `params._meta` noted by the walk (strict mode's exact walk under 128
    /// bytes, its fast path above; envelope mode's walk of `params`) are what `Raw::get`
    /// finds, on objects of keys that are, are not or nearly are `name` or `_meta`, escaped
    /// or not, repeated or not.
    #[test]
    fn params_name_is_what_get_finds(
        members in proptest::collection::vec(
            (proptest::sample::select(&KEYS[..]), proptest::sample::select(&VALUES[..])),
            0..6,
        ),
        pad in 0usize..160,
        spaced in any::<bool>(),
        params_first in any::<bool>(),
    ) {
        let sep = if spaced { " " } else { "" };
        let body: Vec<String> = members.iter().map(|(k, v)| format!("{k}{sep}:{sep}{v}")).collect();
        let params = format!(r#""params":{sep}{{{sep}{}{sep}}}"#, body.join(&format!(",{sep}")));
        let pad = format!(r#""pad":"{}""#, "x".repeat(pad));
        let (a, b) = if params_first { (&params, &pad) } else { (&pad, &params) };
        let msg = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call",{a},{b}}}"#);
        let want = oracle::classify(msg.as_bytes());
        prop_assert_eq!(want.kind, oracle::Kind::Request, "{}", msg);
        for parser in [Parser::new(), ENVELOPE] {
            let m = parser.parse(msg.as_bytes()).expect("a valid request");
            check::params_name_agrees(&m);
        }
    }
}

/// The generator must actually reach every verdict, or the agreement above means little.
#[test]
#[cfg_attr(miri, ignore = "20 000 seeds: native only")]
fn generator_covers_every_verdict() {
    let mut kinds = std::collections::BTreeSet::new();
    let mut reasons = std::collections::BTreeSet::new();
    for seed in 0..20_000u64 {
        let msg = oracle::gen::message(seed);
        let v = agree(&msg);
        kinds.insert(v.kind.as_str());
        if let Some(r) = v.reason {
            reasons.insert(r);
        }
        let m = oracle::gen::mutate(seed, &msg);
        if let Some(r) = agree(&m).reason {
            reasons.insert(r);
        }
    }
    assert_eq!(kinds.len(), 5, "{kinds:?}");
    for r in [
        "parse",
        "not_an_object",
        "batch",
        "duplicate_key",
        "bad_version",
        "bad_method",
        "bad_params",
        "bad_id",
        "result_and_error",
        "no_result_or_error",
        "method_with_response",
        "bad_error_object",
    ] {
        assert!(reasons.contains(r), "generator never produced {r}: {reasons:?}");
    }
}

/// The generated MCP traffic corpus classifies as the oracle says, line by line.
#[test]
#[cfg_attr(miri, ignore = "4 MB of traffic: native only")]
fn corpus_agrees() {
    for mix in [oracle::corpus::Mix::Small, oracle::corpus::Mix::Mixed] {
        for line in oracle::corpus::messages(mix, 2_000_000, 42) {
            agree(&line);
        }
    }
}
