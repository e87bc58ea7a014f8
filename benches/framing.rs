//! Framing throughput over the shared MCP corpus (`rpcscan_oracle::corpus`, Mix::Small).
//!
//! * NDJSON framing + strict classification fed in 4 KiB chunks, against one-shot
//!   `classify` over `ndjson_messages` on the whole buffer (target: at least 0.8×);
//! * NDJSON framing alone, against tokio-util's `LinesCodec` fed the same chunks;
//! * Content-Length and SSE (the same messages in those envelopes) framing + classification.
//!
//! Every routine checks the counts it measures against the one-shot baseline.
//!
//! Run: `cargo bench --bench framing -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use bytes::BytesMut;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rpcscan::frame::{
    ndjson_messages, ContentLengthDecoder, Decode, JsonSeqDecoder, NdjsonDecoder, SseDecoder,
};
use rpcscan::Kind;
use rpcscan_oracle::corpus::{generate, Mix};

const CORPUS_BYTES: usize = 8 << 20;
const CHUNK: usize = 4096;

/// Verdict counts, indexed like `Kind::ALL`.
type Counts = [usize; 5];

fn count(counts: &mut Counts, kind: Kind) {
    let i = Kind::ALL.iter().position(|&k| k == kind).unwrap_or(4);
    counts[i] += 1;
}

/// Feeds `input` in 4 KiB chunks; calls `each` per frame; returns (frames, errors).
fn feed(mut dec: impl Decode, input: &[u8], mut each: impl FnMut(&[u8])) -> (usize, usize) {
    let mut buf = BytesMut::with_capacity(64 * 1024);
    let (mut frames, mut errors) = (0, 0);
    let mut handle = |item: Result<rpcscan::frame::Frame, rpcscan::frame::FrameError>| match item {
        Ok(frame) => {
            frames += 1;
            each(frame.bytes());
        }
        Err(_) => errors += 1,
    };
    for chunk in input.chunks(CHUNK) {
        buf.extend_from_slice(chunk);
        while let Some(item) = dec.decode(&mut buf) {
            handle(item);
        }
    }
    while let Some(item) = dec.decode_eof(&mut buf) {
        handle(item);
    }
    (frames, errors)
}

fn classify_fed(dec: impl Decode, input: &[u8]) -> (Counts, usize) {
    let mut counts = [0; 5];
    let (_, errors) = feed(dec, input, |msg| count(&mut counts, rpcscan::classify(msg)));
    (counts, errors)
}

fn oneshot(corpus: &[u8]) -> Counts {
    let mut counts = [0; 5];
    for (_, line) in ndjson_messages(corpus) {
        count(&mut counts, rpcscan::classify(line));
    }
    counts
}

/// Lines from tokio-util's `LinesCodec` (which also checks UTF-8: a line that is not UTF-8
/// is an `Err`, which would end a `FramedRead`; here it is counted and decoding goes on).
fn lines_codec(corpus: &[u8]) -> usize {
    use tokio_util::codec::{Decoder as _, LinesCodec};
    let mut codec = LinesCodec::new();
    let mut buf = BytesMut::with_capacity(64 * 1024);
    let mut lines = 0;
    let mut eof = false;
    let mut chunks = corpus.chunks(CHUNK);
    loop {
        let item = if eof { codec.decode_eof(&mut buf) } else { codec.decode(&mut buf) };
        match item {
            Ok(Some(line)) => {
                black_box(line);
                lines += 1;
            }
            Err(_) => lines += 1,
            Ok(None) if eof => return lines,
            Ok(None) => match chunks.next() {
                Some(chunk) => buf.extend_from_slice(chunk),
                None => eof = true,
            },
        }
    }
}

fn envelopes(corpus: &[u8]) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let (mut cl, mut sse, mut seq) = (Vec::new(), Vec::new(), Vec::new());
    for (i, (_, msg)) in ndjson_messages(corpus).enumerate() {
        cl.extend_from_slice(format!("Content-Length: {}\r\n\r\n", msg.len()).as_bytes());
        cl.extend_from_slice(msg);
        // MCP Streamable HTTP: an id per event, a keep-alive now and then.
        if i % 16 == 0 {
            sse.extend_from_slice(b": keep-alive\n\n");
        }
        sse.extend_from_slice(format!("id: {i}\nevent: message\ndata: ").as_bytes());
        sse.extend_from_slice(msg);
        sse.extend_from_slice(b"\n\n");
        seq.push(0x1E);
        seq.extend_from_slice(msg);
        seq.push(b'\n');
    }
    (cl, sse, seq)
}

/// Criterion measures one routine after the other, so on a shared machine a neighbour's
/// burst can land on either side. This pairs them: fed and one-shot alternate, and the
/// best of each is kept. Printed, not asserted (timing is not a test).
fn paired_ratio(corpus: &[u8], want: Counts) {
    use std::time::Instant;
    let (mut oneshot_best, mut fed_best) = (f64::MAX, f64::MAX);
    for _ in 0..15 {
        let t = Instant::now();
        assert_eq!(oneshot(black_box(corpus)), want);
        oneshot_best = oneshot_best.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        assert_eq!(classify_fed(NdjsonDecoder::new(), black_box(corpus)).0, want);
        fed_best = fed_best.min(t.elapsed().as_secs_f64());
    }
    let mib = corpus.len() as f64 / f64::from(1 << 20);
    println!(
        "paired best of 15: one-shot {:.0} MiB/s, NdjsonDecoder fed 4 KiB {:.0} MiB/s: ratio {:.2} (target >= 0.8)",
        mib / oneshot_best,
        mib / fed_best,
        oneshot_best / fed_best
    );
}

fn bench(c: &mut Criterion) {
    let corpus = generate(Mix::Small, CORPUS_BYTES, 42);
    let want = oneshot(&corpus);
    let messages: usize = want.iter().sum();
    assert!(want[4] > 0 && want[0] > 0, "the corpus has requests and invalid lines");

    // Every measured routine agrees with the baseline before it is timed.
    assert_eq!(classify_fed(NdjsonDecoder::new(), &corpus), (want, 0));
    assert_eq!(lines_codec(&corpus), messages);
    let (cl, sse, seq) = envelopes(&corpus);
    assert_eq!(classify_fed(ContentLengthDecoder::new(), &cl), (want, 0));
    assert_eq!(classify_fed(SseDecoder::new(), &sse), (want, 0));
    assert_eq!(classify_fed(JsonSeqDecoder::new(), &seq), (want, 0));

    paired_ratio(&corpus, want);

    let mut g = c.benchmark_group("ndjson");
    g.throughput(Throughput::Bytes(corpus.len() as u64));
    g.bench_function("classify one-shot (ndjson_messages)", |b| {
        b.iter(|| assert_eq!(oneshot(black_box(&corpus)), want))
    });
    g.bench_function("classify fed 4 KiB (NdjsonDecoder)", |b| {
        b.iter(|| assert_eq!(classify_fed(NdjsonDecoder::new(), black_box(&corpus)).0, want))
    });
    g.bench_function("frames only, ndjson_messages", |b| {
        b.iter(|| assert_eq!(ndjson_messages(black_box(&corpus)).count(), messages))
    });
    g.bench_function("frames only, NdjsonDecoder 4 KiB", |b| {
        b.iter(|| {
            let (frames, _) = feed(NdjsonDecoder::new(), black_box(&corpus), |m| {
                black_box(m);
            });
            assert_eq!(frames, messages)
        })
    });
    g.bench_function("frames only, tokio-util LinesCodec 4 KiB", |b| {
        b.iter(|| assert_eq!(lines_codec(black_box(&corpus)), messages))
    });
    g.finish();

    for (name, input) in [("content-length", &cl), ("sse", &sse), ("json-seq", &seq)] {
        let mut g = c.benchmark_group(name);
        g.throughput(Throughput::Bytes(input.len() as u64));
        g.bench_function("frames only, 4 KiB", |b| {
            b.iter(|| {
                let frames = match name {
                    "content-length" => feed(ContentLengthDecoder::new(), black_box(input), |m| {
                        black_box(m);
                    }),
                    "sse" => feed(SseDecoder::new(), black_box(input), |m| {
                        black_box(m);
                    }),
                    _ => feed(JsonSeqDecoder::new(), black_box(input), |m| {
                        black_box(m);
                    }),
                };
                assert_eq!(frames, (messages, 0))
            })
        });
        g.bench_function("classify fed 4 KiB", |b| {
            b.iter(|| {
                let counts = match name {
                    "content-length" => classify_fed(ContentLengthDecoder::new(), black_box(input)),
                    "sse" => classify_fed(SseDecoder::new(), black_box(input)),
                    _ => classify_fed(JsonSeqDecoder::new(), black_box(input)),
                };
                assert_eq!(counts, (want, 0))
            })
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
