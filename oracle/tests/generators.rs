//! The generators keep their promises: determinism, sizes, coverage of every verdict, and
//! the oracle stays total and self-consistent on everything they (and mutation) produce.

use std::collections::BTreeMap;

use rpcscan_oracle::corpus::{generate, messages, Mix, Traffic, SMALL_MAX};
use rpcscan_oracle::{classify, gen, json, validate_json, Kind};

fn lines(ndjson: &[u8]) -> Vec<&[u8]> {
    assert!(ndjson.ends_with(b"\n"));
    ndjson[..ndjson.len() - 1].split(|&b| b == b'\n').collect()
}

#[test]
fn corpus_is_deterministic_and_seeded() {
    assert_eq!(generate(Mix::Mixed, 200_000, 9), generate(Mix::Mixed, 200_000, 9));
    assert_ne!(generate(Mix::Small, 50_000, 1), generate(Mix::Small, 50_000, 2));
    let joined: Vec<u8> = messages(Mix::Small, 50_000, 3)
        .into_iter()
        .flat_map(|mut m| {
            m.push(b'\n');
            m
        })
        .collect();
    assert_eq!(joined, generate(Mix::Small, 50_000, 3));
    assert!(generate(Mix::Small, 0, 1).is_empty());
}

#[test]
fn small_mix_sizes() {
    let ndjson = generate(Mix::Small, 2_000_000, 11);
    let lines = lines(&ndjson);
    let max = lines.iter().map(|l| l.len()).max().unwrap();
    let average = ndjson.len() / lines.len();
    assert!(max < SMALL_MAX, "max {max}");
    assert!((300..=500).contains(&average), "average {average}");
}

#[test]
fn mixed_mix_sizes() {
    let ndjson = generate(Mix::Mixed, 5_000_000, 12);
    let lines = lines(&ndjson);
    let average = ndjson.len() / lines.len();
    let big = lines.iter().filter(|l| l.len() > 30_000).count();
    assert!((1500..=2600).contains(&average), "average {average}");
    assert!(big * 200 > lines.len(), "{big} big of {}", lines.len());
}

#[test]
fn corpus_covers_every_kind_and_mcp_feature() {
    let ndjson = generate(Mix::Small, 2_000_000, 5);
    let lines = lines(&ndjson);
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for line in &lines {
        assert!(!line.is_empty() && !line.contains(&b'\r'));
        *kinds.entry(classify(line).kind.as_str()).or_default() += 1;
    }
    for kind in ["request", "notification", "result", "error", "invalid"] {
        assert!(kinds.get(kind).copied().unwrap_or(0) > 0, "{kind} missing: {kinds:?}");
    }
    let invalid = kinds["invalid"] as f64 / lines.len() as f64;
    assert!((0.003..0.03).contains(&invalid), "invalid fraction {invalid}");

    let text = String::from_utf8_lossy(&ndjson);
    for needle in [
        "\"initialize\"",
        "notifications/initialized",
        "\"tools/list\"",
        "\"inputSchema\"",
        "\"tools/call\"",
        "\"progressToken\"",
        "notifications/progress",
        "\"resources/read\"",
        "\"prompts/get\"",
        "\"ping\"",
        "-32601",
        "-32602",
        "-32603",
        "\"data\"",
        "\"id\":\"",
        "\\u00e9",
        "é",
        "\\\"",
        "\"resultType\"",
        "\"jsonrpc\":\"1.0\"",
        "\"id\":null",
    ] {
        assert!(text.contains(needle), "corpus lacks {needle}");
    }
    // ids above 2^53
    assert!(lines.iter().any(|l| {
        classify(l).id.and_then(|id| id.parse::<u64>().ok()).is_some_and(|id| id > 1 << 53)
    }));
    // results whose nested objects have a `method` member are still results
    assert!(lines.iter().any(|l| {
        let v = classify(l);
        v.kind == Kind::Result && String::from_utf8_lossy(l).contains("\"method\"")
    }));
}

#[test]
fn generated_messages_are_grammatical_and_cover_every_verdict() {
    let mut verdicts: BTreeMap<String, usize> = BTreeMap::new();
    let (mut at_limit, mut over_limit) = (0, 0);
    for seed in 0..20_000 {
        let msg = gen::message(seed);
        assert_eq!(msg, gen::message(seed));
        let depth = json::depth(&msg);
        // Grammatical JSON: only the depth limit may be broken, and only on purpose.
        let grammatical = std::str::from_utf8(&msg)
            .ok()
            .and_then(|s| serde_json::from_str::<&serde_json::value::RawValue>(s).ok())
            .is_some();
        assert!(grammatical, "seed {seed}: {}", String::from_utf8_lossy(&msg));
        assert_eq!(validate_json(&msg), depth <= json::MAX_DEPTH, "seed {seed}");
        at_limit += usize::from(depth == json::MAX_DEPTH);
        over_limit += usize::from(depth == json::MAX_DEPTH + 1);
        let v = classify(&msg);
        let key = match v.reason {
            Some(reason) => format!("invalid/{reason}"),
            None => v.kind.as_str().to_owned(),
        };
        *verdicts.entry(key).or_default() += 1;
    }
    let expected = [
        "request",
        "notification",
        "result",
        "error",
        "invalid/parse",
        "invalid/batch",
        "invalid/not_an_object",
        "invalid/duplicate_key",
        "invalid/bad_version",
        "invalid/bad_method",
        "invalid/bad_params",
        "invalid/bad_id",
        "invalid/result_and_error",
        "invalid/no_result_or_error",
        "invalid/method_with_response",
        "invalid/bad_error_object",
    ];
    for key in expected {
        assert!(verdicts.get(key).copied().unwrap_or(0) >= 30, "{key} rare: {verdicts:#?}");
    }
    let valid: usize =
        ["request", "notification", "result", "error"].iter().map(|k| verdicts[*k]).sum();
    assert!(valid * 4 > 20_000, "only {valid} valid messages: {verdicts:#?}");
    assert!(at_limit > 10 && over_limit > 10, "depth {at_limit} at, {over_limit} over");
}

#[test]
fn oracle_is_total_and_consistent_on_mutations() {
    let mut still_valid = 0;
    for seed in 0..20_000u64 {
        let base = if seed % 3 == 0 {
            Traffic::new(Mix::Small, seed).nth(seed as usize % 40).unwrap()
        } else {
            gen::message(seed)
        };
        let mutated = gen::mutate(seed, &base);
        let v = classify(&mutated);
        // JSON validity and the -32700 family are the same question.
        assert_eq!(validate_json(&mutated), v.code != Some(-32700), "{mutated:?}");
        assert_eq!(v.kind == Kind::Invalid, v.code.is_some());
        assert_eq!(v.reason.is_some(), v.code.is_some());
        still_valid += usize::from(v.is_valid());
    }
    assert!(still_valid > 100, "mutations too destructive: {still_valid}");
}

#[test]
fn mutations_are_deterministic_and_break_things() {
    let msg = gen::message(42);
    assert_eq!(gen::mutate(1, &msg), gen::mutate(1, &msg));
    let changed = (0..1000).filter(|&s| gen::mutate(s, &msg) != msg).count();
    assert!(changed > 900);
    assert!(gen::mutate(5, b"").len() < 8);
}
