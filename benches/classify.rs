//! rpcscan against the libraries a gateway would reach for instead, same run, same corpus:
//! serde_json `Value`, a serde_json `RawValue` envelope struct, simd-json borrowed values,
//! sonic-rs lazy object iterators (checked, and unchecked on the valid-JSON subset), and
//! the physical floor of touching every byte once (`memchr` counting newlines).
//!
//! Corpora come from the deterministic MCP traffic generator (`rpcscan-oracle`): "small"
//! (all messages under 1.5 KB, ~400 B average) and "mixed" (~2 KB average, some 50 KB
//! results). Every measured function's kind counts are checked before timing: rpcscan's
//! must equal the oracle's exactly.
//!
//! `cargo bench --bench classify` (add `-- small`, `-- mixed` or `-- scaling` to pick a
//! group). Set `RPCSCAN_FORCE=scalar|avx2|avx512` to measure one kernel level.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rpcscan::{Kind, Parser, Validation};
use rpcscan_oracle::corpus::{self, Mix};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::hint::black_box;

type Counts = [usize; 5];

/// What every baseline extracts; the kind follows SPEC §3 as far as each library allows.
#[derive(Default)]
struct Env {
    version_ok: bool,
    method: Option<bool>,
    params_ok: Option<bool>,
    id: Option<IdType>,
    result: bool,
    error_ok: Option<bool>,
}

#[derive(PartialEq, Clone, Copy)]
enum IdType {
    Str,
    Int,
    Null,
    Other,
}

impl Env {
    fn kind(&self) -> Kind {
        if !self.version_ok {
            return Kind::Invalid;
        }
        let id_ok = matches!(self.id, Some(IdType::Str | IdType::Int));
        match self.method {
            Some(true)
                if !self.result && self.error_ok.is_none() && self.params_ok != Some(false) =>
            {
                match self.id {
                    None => Kind::Notification,
                    Some(_) if id_ok => Kind::Request,
                    _ => Kind::Invalid,
                }
            }
            Some(_) => Kind::Invalid,
            None => match (self.result, self.error_ok) {
                (true, None) if id_ok => Kind::Result,
                (false, Some(true)) if self.id != Some(IdType::Other) => Kind::Error,
                _ => Kind::Invalid,
            },
        }
    }
}

fn raw_id_type(raw: &str) -> IdType {
    match raw.as_bytes().first() {
        Some(b'"') => IdType::Str,
        Some(b'-' | b'0'..=b'9') if !raw.contains(['.', 'e', 'E']) => IdType::Int,
        Some(b'n') => IdType::Null,
        _ => IdType::Other,
    }
}

fn serde_value(line: &[u8]) -> Kind {
    use serde_json::Value;
    let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(line) else {
        return Kind::Invalid;
    };
    let mut env = Env {
        version_ok: map.get("jsonrpc").and_then(Value::as_str) == Some("2.0"),
        method: map.get("method").map(Value::is_string),
        params_ok: map.get("params").map(|p| p.is_object() || p.is_array()),
        result: map.contains_key("result"),
        ..Env::default()
    };
    env.id = map.get("id").map(|id| match id {
        Value::String(_) => IdType::Str,
        Value::Number(n) if n.is_i64() || n.is_u64() => IdType::Int,
        Value::Null => IdType::Null,
        _ => IdType::Other,
    });
    env.error_ok = map.get("error").map(|e| {
        e.get("code").is_some_and(|c| c.is_i64()) && e.get("message").is_some_and(Value::is_string)
    });
    env.kind()
}

#[derive(Deserialize)]
struct RawEnvelope<'a> {
    #[serde(borrow)]
    jsonrpc: Option<&'a RawValue>,
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<&'a RawValue>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct RawError<'a> {
    #[serde(borrow)]
    code: &'a RawValue,
    #[serde(borrow)]
    message: &'a RawValue,
}

fn serde_raw(line: &[u8]) -> Kind {
    let Ok(e) = serde_json::from_slice::<RawEnvelope>(line) else {
        return Kind::Invalid;
    };
    let env = Env {
        version_ok: e.jsonrpc.map(RawValue::get) == Some("\"2.0\""),
        method: e.method.map(|m| m.get().starts_with('"')),
        params_ok: e.params.map(|p| p.get().starts_with(['{', '['])),
        id: e.id.map(|id| raw_id_type(id.get())),
        result: e.result.is_some(),
        error_ok: e.error.map(|err| {
            serde_json::from_str::<RawError>(err.get()).is_ok_and(|r| {
                raw_id_type(r.code.get()) == IdType::Int && r.message.get().starts_with('"')
            })
        }),
    };
    env.kind()
}

fn simd_json_borrowed(line: &[u8], scratch: &mut Vec<u8>) -> Kind {
    use simd_json::prelude::*;
    use simd_json::BorrowedValue;
    scratch.clear();
    scratch.extend_from_slice(line);
    let Ok(BorrowedValue::Object(map)) = simd_json::to_borrowed_value(scratch) else {
        return Kind::Invalid;
    };
    let env = Env {
        version_ok: map.get("jsonrpc").and_then(|v| v.as_str()) == Some("2.0"),
        method: map.get("method").map(|m| m.is_str()),
        params_ok: map.get("params").map(|p| p.is_object() || p.is_array()),
        id: map.get("id").map(|id| {
            if id.is_str() {
                IdType::Str
            } else if id.is_i64() || id.is_u64() {
                IdType::Int
            } else if id.is_null() {
                IdType::Null
            } else {
                IdType::Other
            }
        }),
        result: map.contains_key("result"),
        error_ok: map.get("error").map(|e| {
            e.get("code").is_some_and(|c| c.is_i64())
                && e.get("message").is_some_and(|m| m.is_str())
        }),
    };
    env.kind()
}

fn sonic_env<'a>(
    iter: impl Iterator<Item = sonic_rs::Result<(std::borrow::Cow<'a, str>, sonic_rs::LazyValue<'a>)>>,
) -> Kind {
    use sonic_rs::JsonValueTrait;
    let mut env = Env::default();
    for member in iter {
        let Ok((key, value)) = member else {
            return Kind::Invalid;
        };
        match &*key {
            "jsonrpc" => env.version_ok = value.as_str() == Some("2.0"),
            "method" => env.method = Some(value.is_str()),
            "params" => env.params_ok = Some(value.is_object() || value.is_array()),
            "id" => env.id = Some(raw_id_type(value.as_raw_str())),
            "result" => env.result = true,
            "error" => {
                let mut code = false;
                let mut message = false;
                for m in sonic_rs::to_object_iter(value.as_raw_str()) {
                    let Ok((k, v)) = m else {
                        return Kind::Invalid;
                    };
                    match &*k {
                        "code" => code = raw_id_type(v.as_raw_str()) == IdType::Int,
                        "message" => message = v.is_str(),
                        _ => {}
                    }
                }
                env.error_ok = Some(code && message);
            }
            _ => {}
        }
    }
    env.kind()
}

fn sonic_checked(line: &[u8]) -> Kind {
    let Ok(text) = std::str::from_utf8(line) else {
        return Kind::Invalid;
    };
    sonic_env(sonic_rs::to_object_iter(text))
}

fn sonic_unchecked(line: &[u8]) -> Kind {
    let Ok(text) = std::str::from_utf8(line) else {
        return Kind::Invalid;
    };
    // SAFETY: only called on the corpus subset the oracle found to be valid JSON.
    sonic_env(unsafe { sonic_rs::to_object_iter_unchecked(text) })
}

fn count(lines: &[&[u8]], mut f: impl FnMut(&[u8]) -> Kind) -> Counts {
    let mut counts = [0; 5];
    for line in lines {
        counts[f(line) as usize] += 1;
    }
    counts
}

struct Corpus {
    name: &'static str,
    bytes: Vec<u8>,
    oracle: Counts,
}

impl Corpus {
    fn new(name: &'static str, mix: Mix, size: usize) -> Self {
        let bytes = corpus::generate(mix, size, 1);
        let mut oracle = [0; 5];
        for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let k = match rpcscan_oracle::classify(line).kind {
                rpcscan_oracle::Kind::Request => Kind::Request,
                rpcscan_oracle::Kind::Notification => Kind::Notification,
                rpcscan_oracle::Kind::Result => Kind::Result,
                rpcscan_oracle::Kind::Error => Kind::Error,
                rpcscan_oracle::Kind::Invalid => Kind::Invalid,
            };
            oracle[k as usize] += 1;
        }
        Corpus {
            name,
            bytes,
            oracle,
        }
    }

    fn lines(&self) -> Vec<&[u8]> {
        self.bytes
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .collect()
    }
}

fn bench_mix(c: &mut Criterion, corpus: &Corpus) {
    let lines = corpus.lines();
    let strict = Parser::new();
    let envelope = Parser::new().validation(Validation::Envelope);
    assert_eq!(
        count(&lines, |l| strict.classify(l)),
        corpus.oracle,
        "strict counts"
    );
    assert_eq!(
        count(&lines, |l| envelope.classify(l)),
        corpus.oracle,
        "envelope counts"
    );
    let mut scratch = Vec::with_capacity(1 << 20);
    for (name, counts) in [
        ("serde_json/value", count(&lines, serde_value)),
        ("serde_json/raw_envelope", count(&lines, serde_raw)),
        (
            "simd_json/borrowed",
            count(&lines, |l| simd_json_borrowed(l, &mut scratch)),
        ),
        ("sonic_rs/object_iter", count(&lines, sonic_checked)),
    ] {
        eprintln!(
            "{}: {name} counts {counts:?} (oracle {:?})",
            corpus.name, corpus.oracle
        );
        // Baselines may differ on edge cases, never on the bulk of the traffic.
        let valid = |c: &Counts| c[..4].iter().sum::<usize>();
        assert!(
            valid(&counts).abs_diff(valid(&corpus.oracle)) * 50 <= lines.len(),
            "{name}"
        );
    }

    let mut group = c.benchmark_group(corpus.name);
    group.throughput(Throughput::Bytes(corpus.bytes.len() as u64));
    group.bench_function("rpcscan/strict", |b| {
        b.iter(|| count(black_box(&lines), |l| strict.classify(l)))
    });
    group.bench_function("rpcscan/envelope", |b| {
        b.iter(|| count(black_box(&lines), |l| envelope.classify(l)))
    });
    group.bench_function("serde_json/value", |b| {
        b.iter(|| count(black_box(&lines), serde_value))
    });
    group.bench_function("serde_json/raw_envelope", |b| {
        b.iter(|| count(black_box(&lines), serde_raw))
    });
    group.bench_function("simd_json/borrowed", |b| {
        b.iter(|| count(black_box(&lines), |l| simd_json_borrowed(l, &mut scratch)))
    });
    group.bench_function("sonic_rs/object_iter", |b| {
        b.iter(|| count(black_box(&lines), sonic_checked))
    });
    group.bench_function("memchr/newlines", |b| {
        b.iter(|| memchr::memchr_iter(b'\n', black_box(&corpus.bytes)).count())
    });
    group.finish();

    // Unchecked parsers are only defined on valid JSON: compare on that subset.
    let json_lines: Vec<&[u8]> = lines
        .iter()
        .copied()
        .filter(|l| rpcscan_oracle::validate_json(l))
        .collect();
    let json_bytes: usize = json_lines.iter().map(|l| l.len() + 1).sum();
    assert_eq!(
        count(&json_lines, sonic_unchecked)[..4],
        count(&json_lines, sonic_checked)[..4]
    );
    let mut group = c.benchmark_group(format!("{}-valid-json", corpus.name));
    group.throughput(Throughput::Bytes(json_bytes as u64));
    group.bench_function("rpcscan/envelope", |b| {
        b.iter(|| count(black_box(&json_lines), |l| envelope.classify(l)))
    });
    group.bench_function("sonic_rs/object_iter_unchecked", |b| {
        b.iter(|| count(black_box(&json_lines), sonic_unchecked))
    });
    group.finish();
}

fn classify(c: &mut Criterion) {
    bench_mix(c, &Corpus::new("small", Mix::Small, 4 << 20));
    bench_mix(c, &Corpus::new("mixed", Mix::Mixed, 8 << 20));
}

/// Throughput should not depend on how much input there is (no per-corpus state, nothing
/// growing): the same traffic at 1 MB, 16 MB and 200 MB.
fn scaling(c: &mut Criterion) {
    let strict = Parser::new();
    let envelope = Parser::new().validation(Validation::Envelope);
    let mut group = c.benchmark_group("scaling");
    group.sample_size(10);
    for mb in [1usize, 16, 200] {
        let bytes = corpus::generate(Mix::Small, mb << 20, 5);
        let lines: Vec<&[u8]> = bytes
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .collect();
        let expected = count(&lines, |l| strict.classify(l));
        assert_eq!(count(&lines, |l| envelope.classify(l)), expected);
        assert!(expected[Kind::Invalid as usize] < lines.len() / 20);
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function(format!("strict/{mb}MB"), |b| {
            b.iter(|| count(black_box(&lines), |l| strict.classify(l)))
        });
        group.bench_function(format!("envelope/{mb}MB"), |b| {
            b.iter(|| count(black_box(&lines), |l| envelope.classify(l)))
        });
    }
    group.finish();
}

criterion_group!(benches, classify, scaling);
criterion_main!(benches);
