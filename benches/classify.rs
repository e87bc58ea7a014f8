//! rpcscan against the libraries a gateway would reach for instead, same run, same corpus:
//! serde_json `Value`, a serde_json `RawValue` envelope struct, simd-json borrowed values,
//! sonic-rs lazy object iterators (checked, and unchecked on the valid-JSON subset), and
//! the physical floor of touching every byte once (`memchr` counting newlines).
//!
//! Corpora are the shapes of `rpcscan_benchmarks::shapes`: "tiny" (40–200 B pings and
//! progress notifications), "small" (the MCP generator's messages under 1.5 KB, ~400 B
//! average), "mixed" (~2 KB average, some 50 KB results), "code" (source code as `text`,
//! escape-dense), "cjk" (raw UTF-8 CJK and accented text) and "image" (one 20–120 KB
//! base64 string per result); and simdjson's DOM and On-Demand parsers join when the
//! benchmarks crate was built with simdjson (a loud line says when not). Every measured
//! function's kind counts are checked before timing: rpcscan's must equal the oracle's
//! exactly, the others' must be within 2% on the valid kinds.
//!
//! `cargo bench --bench classify` (add `-- small`, `-- code`, ... or `-- scaling` to pick a
//! group). Set `RPCSCAN_FORCE=scalar|avx2|avx512` to measure one kernel level.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rpcscan::{Kind, Parser, Validation};
use rpcscan_benchmarks::shapes;
use rpcscan_benchmarks::simdjson::{self, Simdjson};
use rpcscan_oracle::corpus::{self, Mix};
use std::hint::black_box;

type Counts = [usize; 5];

use rpcscan_benchmarks::baselines::{
    serde_raw, serde_value, simd_json_borrowed, sonic_checked, sonic_unchecked,
};

fn count(lines: &[&[u8]], mut f: impl FnMut(&[u8]) -> Kind) -> Counts {
    let mut counts = [0; 5];
    for line in lines {
        counts[f(line) as usize] += 1;
    }
    counts
}

struct Corpus {
    name: &'static str,
    /// The corpus followed by `simdjson::PADDING` spaces (`lines` leaves them out).
    bytes: Vec<u8>,
    oracle: Counts,
}

impl Corpus {
    fn new(name: &'static str, size: usize) -> Self {
        let mut bytes = shapes::corpus(name, size, 1).expect("a known shape");
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
        bytes.extend_from_slice(&[b' '; simdjson::PADDING]);
        Corpus { name, bytes, oracle }
    }

    fn text(&self) -> &[u8] {
        &self.bytes[..self.bytes.len() - simdjson::PADDING]
    }

    fn lines(&self) -> Vec<&[u8]> {
        self.text().split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect()
    }
}

fn bench_mix(c: &mut Criterion, corpus: &Corpus) {
    let lines = corpus.lines();
    let strict = Parser::new();
    let envelope = Parser::new().validation(Validation::Envelope);
    assert_eq!(count(&lines, |l| strict.classify(l)), corpus.oracle, "strict counts");
    assert_eq!(count(&lines, |l| envelope.classify(l)), corpus.oracle, "envelope counts");
    let mut scratch = Vec::with_capacity(1 << 20);
    let mut sj = Simdjson::for_level(rpcscan::kernel_level().as_str());
    if sj.is_none() {
        eprintln!(
            "!!! {}: simdjson contenders SKIPPED (build without libsimdjson-dev)",
            corpus.name
        );
    }
    let mut simdjson_counts = Vec::new();
    if let Some(sj) = &mut sj {
        // SAFETY: every line lies in `corpus.bytes`, which has PADDING bytes after the last.
        simdjson_counts.push(("simdjson/dom", count(&lines, |l| unsafe { sj.dom(l) })));
        // SAFETY: as above.
        simdjson_counts.push(("simdjson/ondemand", count(&lines, |l| unsafe { sj.ondemand(l) })));
    }
    for (name, counts) in simdjson_counts.into_iter().chain([
        ("serde_json/value", count(&lines, serde_value)),
        ("serde_json/raw_envelope", count(&lines, serde_raw)),
        ("simd_json/borrowed", count(&lines, |l| simd_json_borrowed(l, &mut scratch))),
        ("sonic_rs/object_iter", count(&lines, sonic_checked)),
    ]) {
        eprintln!("{}: {name} counts {counts:?} (oracle {:?})", corpus.name, corpus.oracle);
        // Baselines may differ on edge cases, never on the bulk of the traffic.
        let valid = |c: &Counts| c[..4].iter().sum::<usize>();
        assert!(valid(&counts).abs_diff(valid(&corpus.oracle)) * 50 <= lines.len(), "{name}");
    }

    let mut group = c.benchmark_group(corpus.name);
    group.throughput(Throughput::Bytes(corpus.text().len() as u64));
    group.bench_function("rpcscan/strict", |b| {
        b.iter(|| count(black_box(&lines), |l| strict.classify(l)))
    });
    group.bench_function("rpcscan/envelope", |b| {
        b.iter(|| count(black_box(&lines), |l| envelope.classify(l)))
    });
    group.bench_function("serde_json/value", |b| b.iter(|| count(black_box(&lines), serde_value)));
    group.bench_function("serde_json/raw_envelope", |b| {
        b.iter(|| count(black_box(&lines), serde_raw))
    });
    group.bench_function("simd_json/borrowed", |b| {
        b.iter(|| count(black_box(&lines), |l| simd_json_borrowed(l, &mut scratch)))
    });
    group.bench_function("sonic_rs/object_iter", |b| {
        b.iter(|| count(black_box(&lines), sonic_checked))
    });
    if let Some(sj) = &mut sj {
        // SAFETY: as for the counts above.
        group.bench_function("simdjson/dom", |b| {
            b.iter(|| count(black_box(&lines), |l| unsafe { sj.dom(l) }))
        });
        // SAFETY: as above.
        group.bench_function("simdjson/ondemand", |b| {
            b.iter(|| count(black_box(&lines), |l| unsafe { sj.ondemand(l) }))
        });
    }
    group.bench_function("memchr/newlines", |b| {
        b.iter(|| memchr::memchr_iter(b'\n', black_box(corpus.text())).count())
    });
    group.finish();

    // Unchecked parsers are only defined on valid JSON: compare on that subset.
    let (json_lines, json_bytes) = corpus::valid_json_lines(&lines);
    assert_eq!(count(&json_lines, sonic_unchecked)[..4], count(&json_lines, sonic_checked)[..4]);
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
    for shape in shapes::SHAPES {
        let size = if shape == "mixed" { 8 << 20 } else { 4 << 20 };
        bench_mix(c, &Corpus::new(shape, size));
    }
}

/// Throughput should not depend on how much input there is (no per-corpus state, nothing
/// growing): the same traffic at 1 MB, 16 MB and 200 MB.
fn scaling(c: &mut Criterion) {
    let strict = Parser::new();
    let envelope = Parser::new().validation(Validation::Envelope);
    let mut group = c.benchmark_group("scaling");
    group.sample_size(10);
    // `cargo bench` passes `--bench`; `cargo test --benches` (CI) runs each function once
    // and only needs to know it works, so it skips the big corpora.
    let sizes: &[usize] =
        if std::env::args().any(|a| a == "--bench") { &[1, 16, 200] } else { &[1] };
    for &mb in sizes {
        let bytes = corpus::generate(Mix::Small, mb << 20, 5);
        let lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect();
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
        // The floor at the same size: how fast this machine reads the bytes once from the
        // cache level (or memory) a corpus of this size lives in.
        group.bench_function(format!("memchr/{mb}MB"), |b| {
            b.iter(|| memchr::memchr_iter(b'\n', black_box(&bytes)).count())
        });
    }
    group.finish();
}

criterion_group!(benches, classify, scaling);
criterion_main!(benches);
