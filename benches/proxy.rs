//! The proxy hot path per message: NDJSON frame → classify → rewrite the id → write into a
//! reused `BytesMut`, against a serde_json `Value` round trip doing the same job (parse,
//! replace `"id"`, serialize). Both read the shared MCP corpus (`rpcscan_oracle::corpus`,
//! `Mix::Small`) through the same `NdjsonDecoder` in 64 KiB chunks, and both answer lines
//! they cannot forward with a fixed error line. Target: at least 5×.
//!
//! Every routine checks its counts (rewritten / forwarded untouched / answered) against
//! the oracle before it is timed and on every iteration.
//!
//! Run: `cargo bench --bench proxy -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use bytes::{BufMut, BytesMut};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rpcscan::frame::{ndjson_messages, Decode, NdjsonDecoder};
use rpcscan::rewrite::write_with_id;
use rpcscan::Parser;
use rpcscan_oracle::corpus::{generate, Mix};
use serde_json::Value;

const CORPUS_BYTES: usize = 4 << 20;
const CHUNK: usize = 64 * 1024;
const PARSE_ERROR_LINE: &[u8] =
    br#"{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}"#;

/// (ids rewritten, forwarded untouched, answered by the proxy)
type Counts = (usize, usize, usize);

/// Feeds `corpus` in chunks through an NDJSON decoder, calling `each` per frame.
fn frames(corpus: &[u8], mut each: impl FnMut(&[u8])) {
    let mut decoder = NdjsonDecoder::new();
    let mut buf = BytesMut::with_capacity(2 * CHUNK);
    for chunk in corpus.chunks(CHUNK) {
        buf.extend_from_slice(chunk);
        while let Some(item) = decoder.decode(&mut buf) {
            if let Ok(frame) = item {
                each(frame.bytes());
            }
        }
    }
    while let Some(item) = decoder.decode_eof(&mut buf) {
        if let Ok(frame) = item {
            each(frame.bytes());
        }
    }
}

fn format_u64(mut n: u64, out: &mut [u8; 20]) -> &[u8] {
    let mut i = out.len();
    loop {
        i -= 1;
        out[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &out[i..]
}

fn rpcscan_proxy(corpus: &[u8], out: &mut BytesMut) -> Counts {
    let parser = Parser::new();
    let mut counts = (0, 0, 0);
    let mut next = 1u64;
    let mut digits = [0u8; 20];
    frames(corpus, |line| {
        match parser.parse(line) {
            Ok(msg) => {
                let id = format_u64(next, &mut digits);
                if write_with_id(&msg, id, out) {
                    next += 1;
                    counts.0 += 1;
                } else {
                    counts.1 += 1;
                }
            }
            Err(invalid) => {
                invalid.response().write(out);
                counts.2 += 1;
            }
        }
        out.put_u8(b'\n');
        if out.len() > CHUNK {
            black_box(&out[..]);
            out.clear();
        }
    });
    counts
}

fn serde_proxy(corpus: &[u8], out: &mut BytesMut) -> Counts {
    let mut counts = (0, 0, 0);
    let mut next = 1u64;
    frames(corpus, |line| {
        match serde_json::from_slice::<Value>(line) {
            Ok(mut v) => {
                match v.as_object_mut().and_then(|o| o.get_mut("id")) {
                    Some(id) => {
                        *id = Value::from(next);
                        next += 1;
                        counts.0 += 1;
                    }
                    None => counts.1 += 1,
                }
                let _ = serde_json::to_writer((&mut *out).writer(), &v);
            }
            Err(_) => {
                out.put_slice(PARSE_ERROR_LINE);
                counts.2 += 1;
            }
        }
        out.put_u8(b'\n');
        if out.len() > CHUNK {
            black_box(&out[..]);
            out.clear();
        }
    });
    counts
}

/// What each routine must report, from the oracle: rpcscan rewrites every valid message
/// with an id member and answers every invalid one; the `Value` round trip rewrites every
/// JSON object with an `id` and answers only what is not JSON.
fn expected(corpus: &[u8]) -> (Counts, Counts) {
    let (mut scan, mut serde) = ((0, 0, 0), (0, 0, 0));
    for (_, line) in ndjson_messages(corpus) {
        let verdict = rpcscan_oracle::classify(line);
        match (verdict.is_valid(), verdict.id.is_some()) {
            (true, true) => scan.0 += 1,
            (true, false) => scan.1 += 1,
            (false, _) => scan.2 += 1,
        }
        match serde_json::from_slice::<Value>(line) {
            Ok(v) if v.get("id").is_some() => serde.0 += 1,
            Ok(_) => serde.1 += 1,
            Err(_) => serde.2 += 1,
        }
    }
    (scan, serde)
}

fn bench(c: &mut Criterion) {
    let corpus = generate(Mix::Small, CORPUS_BYTES, 42);
    let (want_scan, want_serde) = expected(&corpus);
    let messages = ndjson_messages(&corpus).count();
    assert!(want_scan.0 > 0 && want_scan.1 > 0 && want_scan.2 > 0);
    assert_eq!(want_scan.0 + want_scan.1 + want_scan.2, messages);
    assert_eq!(want_serde.0 + want_serde.1 + want_serde.2, messages);

    let mut out = BytesMut::with_capacity(4 * CHUNK);
    assert_eq!(rpcscan_proxy(&corpus, &mut out), want_scan);
    assert_eq!(serde_proxy(&corpus, &mut out), want_serde);

    let mut g = c.benchmark_group("proxy");
    g.throughput(Throughput::Bytes(corpus.len() as u64));
    g.bench_function("rpcscan: frame, classify, splice id", |b| {
        b.iter(|| assert_eq!(rpcscan_proxy(black_box(&corpus), &mut out), want_scan))
    });
    g.bench_function("serde_json Value: frame, parse, replace id, serialize", |b| {
        b.iter(|| assert_eq!(serde_proxy(black_box(&corpus), &mut out), want_serde))
    });
    // Context: what the framing and the scan cost on their own in the same setting.
    let frames_only = || {
        let mut n = 0;
        frames(&corpus, |line| {
            black_box(line);
            n += 1;
        });
        n
    };
    assert_eq!(frames_only(), messages);
    g.bench_function("context: frames only", |b| b.iter(|| assert_eq!(frames_only(), messages)));
    g.bench_function("context: frames + classify", |b| {
        b.iter(|| {
            let mut n = 0;
            frames(black_box(&corpus), |line| {
                n += usize::from(rpcscan::classify(line) != rpcscan::Kind::Invalid);
            });
            assert_eq!(n, want_scan.0 + want_scan.1)
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
