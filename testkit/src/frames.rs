//! The property of the `frames` target: every framing, fed one stream in any chunking,
//! gives the same frames and errors as when fed the whole stream at once.
//!
//! The `frames` fuzz target and `tests/regressions.rs` both call [`frames`].

use bytes::BytesMut;
use rpcscan::frame::{ndjson_messages, AnyDecoder, Decode, Frame, FrameError, Framing};
use rpcscan::Parser;
use rpcscan_oracle::rng::Rng;

/// One decoder answer.
pub type Item = Result<Frame, FrameError>;

/// Maximum message sizes the fuzzer picks from (index by a selector byte); small ones make
/// `too_large` reachable with short inputs.
pub const MAX_SIZES: [usize; 8] = [
    rpcscan::frame::DEFAULT_MAX_MESSAGE_SIZE,
    rpcscan::frame::DEFAULT_MAX_MESSAGE_SIZE,
    rpcscan::frame::DEFAULT_MAX_MESSAGE_SIZE,
    0,
    1,
    7,
    16,
    64,
];

/// A fuzz input: selector byte (framing, maximum size), chunking seed, then the stream.
pub struct Input<'a> {
    /// The framing under test.
    pub framing: Framing,
    /// Its maximum message size.
    pub max: usize,
    /// Seed of the chunk sizes.
    pub seed: u64,
    /// The stream.
    pub stream: &'a [u8],
}

impl<'a> Input<'a> {
    /// Splits raw fuzzer bytes: `[selector, seed, stream...]`.
    pub fn from_bytes(data: &'a [u8]) -> Self {
        let selector = data.first().copied().unwrap_or(0);
        Input {
            framing: Framing::ALL[usize::from(selector & 3)],
            max: MAX_SIZES[usize::from((selector >> 2) & 7)],
            seed: u64::from(data.get(1).copied().unwrap_or(0)),
            stream: data.get(2..).unwrap_or_default(),
        }
    }
}

/// Everything a decoder says about `stream`, fed in chunks of the given sizes (the last
/// chunk takes the rest), then drained with `decode_eof`.
pub fn decode_all(framing: Framing, max: usize, stream: &[u8], chunks: &[usize]) -> Vec<Item> {
    let mut decoder = AnyDecoder::new(framing).max_message_size(max);
    let mut buf = BytesMut::new();
    let mut items = Vec::new();
    let mut fed = 0;
    // Every answer other than "need more" consumes at least one byte, so a stream of n
    // bytes gives at most n answers; more means the decoder spins.
    let bound = stream.len() + 2;
    let mut drain = |buf: &mut BytesMut, items: &mut Vec<Item>, eof: bool| loop {
        let item = if eof { decoder.decode_eof(buf) } else { decoder.decode(buf) };
        let Some(item) = item else { break };
        items.push(item);
        assert!(items.len() <= bound, "{framing}: decoder does not make progress");
    };
    for &size in chunks {
        let end = (fed + size).min(stream.len());
        buf.extend_from_slice(&stream[fed..end]);
        fed = end;
        drain(&mut buf, &mut items, false);
    }
    buf.extend_from_slice(&stream[fed..]);
    drain(&mut buf, &mut items, false);
    drain(&mut buf, &mut items, true);
    assert!(buf.is_empty(), "{framing}: decode_eof left {} bytes", buf.len());
    // A decoder keeps answering `None` once drained.
    assert!(decoder.decode_eof(&mut buf).is_none());
    items
}

/// Chunk sizes for `seed`: runs of single bytes, empty chunks, short and long chunks.
pub fn chunking(seed: u64, len: usize) -> Vec<usize> {
    let mut rng = Rng::new(seed);
    let mut chunks = Vec::new();
    let mut total = 0;
    while total < len {
        let size = match rng.below(8) {
            0 => 0,
            1..=3 => 1,
            4 | 5 => rng.range(2, 8),
            6 => rng.range(8, 64),
            _ => rng.range(64, 4096),
        };
        chunks.push(size);
        total += size;
    }
    chunks
}

/// Checks the framing property on one input: the whole stream, one byte at a time, and the
/// seeded chunking all give the same items; frames and errors stay inside the stream, in
/// order, within the size limit; each frame's message scans the same owned as borrowed;
/// for NDJSON, the borrowing `ndjson_messages` iterator agrees with the decoder.
pub fn frames(input: &Input<'_>) {
    let Input { framing, max, seed, stream } = *input;
    // Detection looks at any prefix without panicking; RS first always means json-seq.
    let detected = Framing::detect(stream);
    if stream.first() == Some(&0x1E) {
        assert_eq!(detected, Framing::JsonSeq);
    }

    let whole = decode_all(framing, max, stream, &[]);
    let bytewise = decode_all(framing, max, stream, &vec![1; stream.len()]);
    assert_eq!(whole, bytewise, "{framing} (max {max}): whole vs byte by byte");
    let chunks = chunking(seed, stream.len());
    let chunked = decode_all(framing, max, stream, &chunks);
    assert_eq!(whole, chunked, "{framing} (max {max}): whole vs chunks {chunks:?}");

    let len = stream.len() as u64;
    let mut last = 0u64;
    for item in &whole {
        match item {
            Ok(frame) => {
                assert!(frame.offset() >= last, "{framing}: frames out of order");
                last = frame.offset();
                assert!(frame.offset() < len.max(1));
                assert!(
                    frame.bytes().len() <= max,
                    "{framing}: frame of {} bytes over the maximum {max}",
                    frame.bytes().len()
                );
                if let Some(body) = frame.body_offset() {
                    let at = usize::try_from(body).unwrap();
                    assert_eq!(
                        stream.get(at..at + frame.bytes().len()),
                        Some(&frame.bytes()[..]),
                        "{framing}: body_offset does not point at the frame's bytes"
                    );
                    assert!(body >= frame.offset());
                } else {
                    assert_eq!(framing, Framing::Sse, "only SSE joins lines");
                }
                if framing != Framing::Sse {
                    assert!(frame.event().is_none() && frame.last_event_id().is_none());
                }
                // Owned and borrowed scans agree.
                for parser in
                    [Parser::new(), Parser::new().validation(rpcscan::Validation::Envelope)]
                {
                    let borrowed = parser.parse(frame.bytes());
                    match frame.clone().parse(&parser) {
                        Ok(owned) => assert_eq!(Ok(owned.as_message()), borrowed),
                        Err(owned) => {
                            assert_eq!(owned.response(), owned.as_invalid().response());
                            assert_eq!(Err(owned.as_invalid()), borrowed);
                        }
                    }
                }
            }
            Err(error) => {
                assert!(error.offset() >= last, "{framing}: errors out of order");
                last = error.offset();
                assert!(!error.is_empty(), "{framing}: empty bad frame {error}");
                assert!(
                    error.offset() + error.len() <= len,
                    "{framing}: bad frame {error} (len {}) past the end {len}",
                    error.len()
                );
                assert_eq!(error.framing(), framing);
                assert!(error.reason().is_parse_error());
                let _ = error.to_string();
            }
        }
    }

    if framing == Framing::Ndjson && max == rpcscan::frame::DEFAULT_MAX_MESSAGE_SIZE {
        let borrowed: Vec<(u64, &[u8])> =
            ndjson_messages(stream).map(|(at, line)| (at as u64, line)).collect();
        let decoded: Vec<(u64, &[u8])> = whole
            .iter()
            .map(|item| {
                let frame = item.as_ref().expect("no NDJSON errors under the default limit");
                (frame.offset(), &frame.bytes()[..])
            })
            .collect();
        assert_eq!(borrowed, decoded, "ndjson_messages vs NdjsonDecoder");
    }
}
