//! The framings of docs/spec.md §7 as tables, then as properties: every chunking of a stream gives
//! the same frames and errors as the whole stream, for every framing; the buffer stays
//! bounded; `ndjson_messages` agrees with `NdjsonDecoder`; `OwnedMessage` agrees with
//! `Message`; and (feature `tokio`) a bad frame is an item of a `FramedRead`, not its end.

use bytes::{Bytes, BytesMut};
use proptest::prelude::*;
use rpcscan::frame::{
    ndjson_messages, AnyDecoder, ContentLengthDecoder, Decode, Frame, FrameError, FrameErrorKind,
    Framing, JsonSeqDecoder, NdjsonDecoder, SseDecoder, MAX_HEADER_BLOCK,
};
use rpcscan::{Kind, OwnedMessage, Parser, Reason};

type Item = Result<Frame, FrameError>;

/// Feeds `input` in chunks of the given sizes (cycled; 0 counts as 1), then ends it.
/// Also checks the memory bound: after each `decode` round, at most `bound` bytes stay.
fn feed(mut dec: impl Decode, input: &[u8], sizes: &[usize], bound: usize) -> Vec<Item> {
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    let mut at = 0;
    let mut sizes = sizes.iter().copied().cycle();
    while at < input.len() {
        let n = sizes.next().unwrap_or(usize::MAX).max(1).min(input.len() - at);
        buf.extend_from_slice(&input[at..at + n]);
        at += n;
        while let Some(item) = dec.decode(&mut buf) {
            out.push(item);
        }
        assert!(buf.len() <= bound, "{} bytes buffered, bound {bound}", buf.len());
    }
    while let Some(item) = dec.decode_eof(&mut buf) {
        out.push(item);
    }
    assert!(buf.is_empty(), "decode_eof left {} bytes", buf.len());
    out
}

fn whole(dec: impl Decode, input: &[u8]) -> Vec<Item> {
    feed(dec, input, &[usize::MAX], usize::MAX)
}

/// `bytes@offset` for a frame, `!kind@offset+len` for an error.
fn show(items: &[Item]) -> Vec<String> {
    items
        .iter()
        .map(|item| match item {
            Ok(f) => format!("{}@{}", String::from_utf8_lossy(f.bytes()), f.offset()),
            Err(e) => format!("!{}@{}+{}", e.kind(), e.offset(), e.len()),
        })
        .collect()
}

/// Runs a table: each input fed whole, one byte at a time and in 3-byte chunks.
fn table<D: Decode + Clone>(dec: D, cases: &[(&[u8], &[&str])]) {
    for &(input, want) in cases {
        let got = whole(dec.clone(), input);
        assert_eq!(show(&got), want, "input {:?}", String::from_utf8_lossy(input));
        for sizes in [&[1][..], &[3], &[2, 5, 1]] {
            let chunked = feed(dec.clone(), input, sizes, usize::MAX);
            assert_eq!(chunked, got, "chunks {sizes:?} of {:?}", String::from_utf8_lossy(input));
        }
    }
}

// ---------------------------------------------------------------------------------------
// NDJSON

#[test]
fn ndjson_table() {
    table(
        NdjsonDecoder::new(),
        &[
            (b"a\nb", &["a@0", "b@2"]),
            (b"a\r\nb\r\n", &["a@0", "b@3"]),
            (b"a\r\r\n", &["a\r@0"]),             // one CR stripped
            (b"a\rb\n", &["a\rb@0"]),             // a CR inside a line stays
            (b"\n \n\t\r\n\r\n\r\nx", &["x@10"]), // blank lines are not messages
            (b"a\n\r", &["a@0"]),                 // nor is a final lone CR
            (b"  \t ", &[]),                      // nor a final blank line
            (b"", &[]),
            (b" {} \n", &[" {} @0"]), // whitespace around a message stays
            (b"\xEF\xBB\xBF{}\n", &["\u{feff}{}@0"]), // a BOM is passed through
            (b"\n\xEF\xBB\xBF{}", &["\u{feff}{}@1"]),
            (b"\x0c\n", &["\x0c@0"]), // form feed is not JSON whitespace
        ],
    );
}

#[test]
fn ndjson_bom_reaches_the_scanner() {
    let frames =
        whole(NdjsonDecoder::new(), b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\n");
    let frame = frames[0].as_ref().unwrap();
    assert_eq!(rpcscan::parse(frame.bytes()).unwrap_err().reason(), Reason::Bom);
}

#[test]
fn ndjson_limits() {
    table(
        NdjsonDecoder::new().max_message_size(4),
        &[
            (b"abcd\nz", &["abcd@0", "z@5"]),          // exactly N
            (b"abcde\nz", &["!too_large@0+5", "z@6"]), // N + 1
            (b"abcd\r\nz", &["abcd@0", "z@6"]),        // N, CRLF not counted
            (b"abcde\r\nz", &["!too_large@0+5", "z@7"]),
            (b"abcd\r\r\nz", &["!too_large@0+5", "z@7"]), // only one CR is stripped
            (b"abcd", &["abcd@0"]),                       // at end of input
            (b"abcd\r", &["abcd@0"]),
            (b"abcde", &["!too_large@0+5"]),
            (b"abcde\r", &["!too_large@0+5"]),
            (b"      \nz", &["!too_large@0+6", "z@7"]), // blank, but over the limit
            (
                b"0123456789abcdef\n{}\n0123456789\r\n",
                &["!too_large@0+16", "{}@17", "!too_large@20+10"],
            ),
        ],
    );
}

#[test]
fn ndjson_oversized_line_is_never_buffered_whole() {
    let max = 1000;
    let mut input = vec![b'x'; 5_000_000];
    input.extend_from_slice(b"\r\n{}\n");
    let items = feed(NdjsonDecoder::new().max_message_size(max), &input, &[4096], max + 1);
    assert_eq!(show(&items), ["!too_large@0+5000000", "{}@5000002"]);
    let err = items[0].as_ref().unwrap_err();
    assert_eq!(err.reason(), Reason::TooLarge);
    assert_eq!(
        err.to_string(),
        "NDJSON line of 5000000 bytes at byte 0 exceeds the maximum message size of 1000 bytes"
    );
}

#[test]
fn ndjson_frames_are_zero_copy() {
    let mut buf = BytesMut::from(&b"{\"a\":1}\n{\"b\":2}\n"[..]);
    let base = buf.as_ptr() as usize;
    let mut dec = NdjsonDecoder::new();
    let a = dec.decode(&mut buf).unwrap().unwrap();
    let b = dec.decode(&mut buf).unwrap().unwrap();
    assert_eq!(a.bytes().as_ptr() as usize, base);
    assert_eq!(b.bytes().as_ptr() as usize, base + 8);
    assert_eq!((a.body_offset(), b.body_offset()), (Some(0), Some(8)));
    assert_eq!((a.event(), a.last_event_id()), (None, None));
}

// ---------------------------------------------------------------------------------------
// Content-Length

const CL2: &str = "Content-Length: 2\r\n\r\n{}";

#[test]
fn content_length_table() {
    table(
        ContentLengthDecoder::new(),
        &[
            (CL2.as_bytes(), &["{}@0"]),
            (b"Content-Length: 2\r\n\r\n{}Content-Length: 3\r\n\r\n[1]", &["{}@0", "[1]@23"]),
            // Header names in any case; other headers accepted and ignored, before or after.
            (b"CONTENT-LENGTH: 2\r\n\r\n{}", &["{}@0"]),
            (b"content-length:2\r\n\r\n{}", &["{}@0"]),
            (b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 2\r\n\r\n{}", &["{}@0"]),
            (b"Content-Length: 2\r\nX-Trace: a:b:c\r\n\r\n{}", &["{}@0"]),
            (b"Content-Length: \t002 \r\n\r\n{}", &["{}@0"]),
            // Bare LF accepted, also mixed with CRLF.
            (b"Content-Length: 2\n\n{}", &["{}@0"]),
            (b"Content-Length: 2\r\n\n{}", &["{}@0"]),
            (b"Content-Length: 2\n\r\n{}", &["{}@0"]),
            // The body is opaque: it may hold line breaks and header-looking bytes.
            (b"Content-Length: 25\r\n\r\n\r\n\r\nContent-Length: 1\r\n\r\n", &["\r\n\r\nContent-Length: 1\r\n\r\n@0"]),
            (b"Content-Length: 0\r\n\r\n", &["@0"]),
            // Whitespace between frames is skipped silently.
            (b"\r\n\nContent-Length: 2\r\n\r\n{}\n\r\n Content-Length: 2\r\n\r\n[]\n", &["{}@3", "[]@30"]),
        ],
    );
}

#[test]
fn content_length_errors() {
    table(
        ContentLengthDecoder::new(),
        &[
            // Junk before a header: reported once, resumes at the next `Content-Length:` line.
            (b"garbage\r\nmore\nContent-Length: 2\r\n\r\n{}", &["!junk@0+14", "{}@14"]),
            (b"{\"jsonrpc\":\"2.0\"}\ncontent-LENGTH: 2\r\n\r\n{}", &["!junk@0+18", "{}@18"]),
            (b"junk\n", &["!junk@0+5"]),
            (b"junk", &["!truncated@0+4"]), // could still become `junk: value`
            (b"{junk", &["!junk@0+5"]),
            (b"\x00", &["!junk@0+1"]),
            // A resync line must start with `Content-Length:` exactly.
            (b"x\r\n Content-Length: 2\r\n\r\n{}", &["!junk@0+27"]),
            (
                b"x\r\nContent-Type: 2\r\n\r\n{}\nContent-Length: 2\r\n\r\n{}",
                &["!junk@0+25", "{}@25"],
            ),
            // Bad header blocks.
            (
                b"Content-Type: x\r\n\r\n{}\nContent-Length: 2\r\n\r\n[]",
                &["!missing_length@0+22", "[]@22"],
            ),
            (
                b"Content-Length: 2\r\ncontent-length: 2\r\n\r\n{}\r\nContent-Length: 2\r\n\r\n[]",
                &["!duplicate_length@0+44", "[]@44"],
            ),
            (
                b"Content-Length: two\r\n\r\n{}\nContent-Length: 2\r\n\r\n[]",
                &["!bad_length@0+26", "[]@26"],
            ),
            (
                b"Content-Length: -1\r\n\r\nContent-Length: 2\r\n\r\n[]",
                &["!bad_length@0+22", "[]@22"],
            ),
            (
                b"Content-Length: 1.0\r\n\r\nContent-Length: 2\r\n\r\n[]",
                &["!bad_length@0+23", "[]@23"],
            ),
            (b"Content-Length:\r\n\r\nContent-Length: 2\r\n\r\n[]", &["!bad_length@0+19", "[]@19"]),
            (b"Content-Length: 18446744073709551616\r\n\r\n", &["!bad_length@0+40"]),
            (
                b"Content-Length: 2\r\nno colon here\r\n\r\n{}\nContent-Length: 2\r\n\r\n[]",
                &["!bad_header@0+39", "[]@39"],
            ),
            (
                b"Content-Length: 2\r\n folded: x\r\n\r\nContent-Length: 2\r\n\r\n[]",
                &["!bad_header@0+33", "[]@33"],
            ),
            (
                b"Content-Length: 2\r\nX: a\rb\r\n\r\nContent-Length: 2\r\n\r\n[]",
                &["!bad_header@0+29", "[]@29"],
            ),
            (
                b"Content-Length: 2\r\nX: caf\xc3\xa9\r\n\r\nContent-Length: 2\r\n\r\n[]",
                &["!bad_header@0+31", "[]@31"],
            ),
            // End of input inside a frame.
            (b"Content-Length: 5\r\n\r\n{}", &["!truncated@0+23"]),
            (b"Content-Length: 5\r\n", &["!truncated@0+19"]),
            (b"Content-Le", &["!truncated@0+10"]),
            (b"Content-Length: 2\r\n\r\n{}x", &["{}@0", "!truncated@23+1"]),
            (b"Content-Length: 2\r\n\r\n{}{", &["{}@0", "!junk@23+1"]),
        ],
    );
}

#[test]
fn content_length_limits() {
    table(
        ContentLengthDecoder::new().max_message_size(2),
        &[
            (b"Content-Length: 2\r\n\r\n{}", &["{}@0"]),
            // Over the limit: the declared body is skipped exactly, and decoding goes on.
            (
                b"Content-Length: 3\r\n\r\n[1]Content-Length: 2\r\n\r\n{}",
                &["!too_large@0+24", "{}@24"],
            ),
            (b"Content-Length: 99\r\n\r\n[1]", &["!too_large@0+25"]),
        ],
    );
    let err =
        whole(ContentLengthDecoder::new().max_message_size(2), b"Content-Length: 3\r\n\r\n[1]");
    assert_eq!(
        err[0].as_ref().unwrap_err().to_string(),
        "Content-Length 3 at byte 0 exceeds the maximum message size of 2 bytes"
    );
    // The declared body streams past without being buffered.
    let mut input = b"Content-Length: 3000000\r\n\r\n".to_vec();
    input.resize(input.len() + 3_000_000, b' ');
    input.extend_from_slice(CL2.as_bytes());
    let items = feed(ContentLengthDecoder::new().max_message_size(100), &input, &[4096], 4096);
    assert_eq!(show(&items), ["!too_large@0+3000027", "{}@3000027"]);
}

#[test]
fn content_length_header_block_limit() {
    let header = |n: usize| {
        let mut block = b"Content-Length: 2\r\nX: ".to_vec();
        block.resize(block.len() + n, b'x');
        block.extend_from_slice(b"\r\n\r\n{}\nContent-Length: 2\r\n\r\n[]");
        block
    };
    // The block (blank line included) may be MAX_HEADER_BLOCK bytes long, not one more.
    let fits = header(MAX_HEADER_BLOCK - 26);
    let items = whole(ContentLengthDecoder::new(), &fits);
    assert_eq!(show(&items)[0], "{}@0");
    let over = header(MAX_HEADER_BLOCK - 25);
    for sizes in [&[usize::MAX][..], &[1000], &[1]] {
        let items = feed(ContentLengthDecoder::new(), &over, sizes, MAX_HEADER_BLOCK);
        let want = format!("!bad_header@0+{}", MAX_HEADER_BLOCK + 4);
        assert_eq!(show(&items), [want.as_str(), &format!("[]@{}", MAX_HEADER_BLOCK + 4)]);
    }
    // A first line that long is junk, not a header.
    let mut junk = vec![b'x'; 10_000];
    junk.extend_from_slice(b"\nContent-Length: 2\r\n\r\n{}");
    let items = feed(ContentLengthDecoder::new(), &junk, &[4096], MAX_HEADER_BLOCK + 4096);
    assert_eq!(show(&items), ["!junk@0+10001", "{}@10001"]);
}

// ---------------------------------------------------------------------------------------
// SSE

#[test]
fn sse_table() {
    table(
        SseDecoder::new(),
        &[
            (b"data: {}\n\n", &["{}@0"]),
            (b"data: {}\r\n\r\n", &["{}@0"]),
            (b"data: {}\r\r", &["{}@0"]),
            (b"data: {}\r\n\rdata: []\r\r\n", &["{}@0", "[]@11"]), // CR then CRLF
            (b"data:{}\n\n", &["{}@0"]),                           // the space is optional
            (b"data:  {}\n\n", &[" {}@0"]),                        // only one is removed
            (b"data: [1,\ndata: 2]\n\n", &["[1,\n2]@0"]),          // joined with \n
            (b"data: a\r\ndata: b\rdata: c\n\n", &["a\nb\nc@0"]),
            (b": keep-alive\n\n: ping\r\n\r\n", &[]), // comments
            (b": c\ndata: {}\n\n", &["{}@0"]),        // the event starts at its comment
            (b"data:\n\n", &[]),                      // empty data: no message
            (b"data\n\n", &[]),                       // field without colon
            (b"data\ndata\n\n", &["\n@0"]),           // two empty lines join to "\n"
            (b"\n\n\ndata: {}\n\n", &["{}@3"]),
            (b"event: x\n\n", &[]),                 // no data
            (b"Data: {}\n\n", &[]),                 // field names are case-sensitive
            (b"foo: bar\ndata: {}\n\n", &["{}@0"]), // unknown fields ignored
            (b"data: {}\n", &[]),                   // unterminated event at EOF
            (b"data: {}", &[]),
            (b"data: {}\n\ndata: []", &["{}@0"]),
            (b"\xEF\xBB\xBFdata: {}\n\n", &["{}@3"]), // one BOM at stream start
            (b"\xEF\xBB\xBF\xEF\xBB\xBFdata: {}\n\n", &[]), // the second is a field name
            (b"data: a\n\n\xEF\xBB\xBFdata: b\n\n", &["a@0"]), // only at stream start
            (b"data: \xEF\xBB\xBF{}\n\n", &["\u{feff}{}@0"]), // in data: passed through
            (b"\xEF\xBB", &[]),
        ],
    );
}

#[test]
fn sse_fields() {
    let items = whole(
        SseDecoder::new(),
        b"id: 7\ndata:\n\n\
          data: a\n\n\
          event: notice\nid: 8\ndata: b\n\n\
          id: 9\0\ndata: c\n\n\
          id\ndata: d\n\n\
          event:\nid: caf\xc3\xa9\ndata: e\n\n",
    );
    let got: Vec<_> = items
        .iter()
        .map(|i| {
            let f = i.as_ref().unwrap();
            (f.bytes().clone(), f.event(), f.last_event_id())
        })
        .collect();
    assert_eq!(
        got,
        [
            (Bytes::from("a"), None, Some("7")), // the priming event's id was kept
            (Bytes::from("b"), Some("notice"), Some("8")),
            (Bytes::from("c"), None, Some("8")), // an id with NUL is ignored
            (Bytes::from("d"), None, None),      // an empty id resets it
            (Bytes::from("e"), None, Some("café")),
        ]
    );

    let mut dec = SseDecoder::new();
    let mut buf = BytesMut::from(&b"retry: 3000\nretry: 1x\nid: 5\n\n"[..]);
    assert!(dec.decode(&mut buf).is_none());
    assert_eq!((dec.retry(), dec.last_event_id()), (Some(3000), Some("5")));
    // An unterminated event does not update the last event id.
    let mut buf = BytesMut::from(&b"id: 6\ndata: x\n"[..]);
    assert!(dec.decode_eof(&mut buf).is_none());
    assert_eq!(dec.last_event_id(), Some("5"));
}

#[test]
fn sse_event_types_repeat_and_change() {
    let items = whole(
        SseDecoder::new(),
        b"event: message\ndata: 1\n\nevent: message\ndata: 2\n\ndata: 3\n\nevent: other\ndata: 4\n\nevent: message\nevent: x\ndata: 5\n\n",
    );
    let kinds: Vec<_> = items.iter().map(|i| i.as_ref().unwrap().event()).collect();
    assert_eq!(kinds, [Some("message"), Some("message"), None, Some("other"), Some("x")]);
}

#[test]
fn long_messages_fed_bytewise_take_linear_time() {
    // Searching the whole buffer again on every byte would take ~10^12 steps here.
    let n = 1 << 20;
    let body = vec![b'x'; n];
    let ndjson = [&body[..], b"\n"].concat();
    let sse = [b"data: ", &body[..], b"\r\n\r\n"].concat();
    let seq = [b"\x1e", &body[..], b"\n\x1e"].concat();
    let cl = [format!("Content-Length: {n}\r\n\r\n").as_bytes(), &body[..]].concat();
    for (framing, input) in [
        (Framing::Ndjson, ndjson),
        (Framing::Sse, sse),
        (Framing::JsonSeq, seq),
        (Framing::ContentLength, cl),
    ] {
        let items = feed(AnyDecoder::new(framing), &input, &[1], usize::MAX);
        assert_eq!(items.len(), 1, "{framing}");
        assert_eq!(items[0].as_ref().unwrap().bytes().len(), n, "{framing}");
    }
}

#[test]
fn sse_body_offset() {
    let items = whole(SseDecoder::new(), b"data: {}\n\nid: 1\ndata:[]\n\ndata: a\ndata: b\n\n");
    let offsets: Vec<_> = items.iter().map(|i| i.as_ref().unwrap().body_offset()).collect();
    assert_eq!(offsets, [Some(6), Some(21), None]);
}

#[test]
fn sse_limits() {
    table(
        SseDecoder::new().max_message_size(4),
        &[
            (b"data: abcd\n\n", &["abcd@0"]),
            (b"data: abcde\n\ndata: z\n\n", &["!too_large@0+12", "z@13"]),
            (b"data: ab\ndata: c\n\n", &["ab\nc@0"]), // 4 bytes joined
            (b"data: ab\ndata: cd\n\n", &["!too_large@0+18"]), // 5 bytes joined
            (b"data: a\nid: 0123456789\n\n", &["!too_large@0+23"]), // an over-long line
            (b": 0123456789abcdef\n\ndata: z\n\n", &["z@20"]), // comments may be long
            (b"data: 0123456789abcdef\r\n\r\ndata: z\r\n\r\n", &["!too_large@0+24", "z@26"]),
            (b"data: 0123456789abcdef\n", &[]), // unterminated at EOF
        ],
    );
    let mut input = b"data: ".to_vec();
    input.resize(3_000_000, b'x');
    input.extend_from_slice(b"\r\n\r\ndata: {}\r\n\r\n");
    let items = feed(SseDecoder::new().max_message_size(100), &input, &[4096], 106);
    assert_eq!(show(&items), ["!too_large@0+3000002", "{}@3000004"]);
}

// ---------------------------------------------------------------------------------------
// json-seq

#[test]
fn json_seq_table() {
    table(
        JsonSeqDecoder::new(),
        &[
            (b"\x1e{}\n", &["{}@0"]),
            (b"\x1e{}\n\x1e[]\n", &["{}@0", "[]@4"]),
            (b"\x1e\x1e\x1e{}\n", &["{}@2"]), // consecutive RS ignored
            (b"\x1e{}", &["{}@0"]),           // the last record needs no LF
            (b"\x1e{}\n\n", &["{}\n@0"]),     // only one LF is removed
            (b"\x1e{}\r\n", &["{}\r@0"]),
            (b"\x1e\n\x1e \t\r\n\x1e{}", &["{}@7"]), // blank records skipped
            (b"\x1e", &[]),
            (b"", &[]),
            (b" \n\x1e{}\n", &["{}@2"]), // whitespace before the first RS
            (b"junk\x1e{}\n", &["!junk@0+4", "{}@4"]),
            (b"\xEF\xBB\xBF\x1e{}\n", &["!junk@0+3", "{}@3"]),
            (b"\x1e\xEF\xBB\xBF{}\n", &["\u{feff}{}@0"]),
            (b"{}\n", &["!junk@0+3"]),
            (b"\x1e{}\n\x1e{\"a\":\n1}\n", &["{}@0", "{\"a\":\n1}@4"]), // LF inside a record
        ],
    );
}

#[test]
fn json_seq_limits() {
    table(
        JsonSeqDecoder::new().max_message_size(2),
        &[
            (b"\x1e{}\n\x1e[]", &["{}@0", "[]@4"]),
            (b"\x1e{ }\n\x1e[]", &["!too_large@0+4", "[]@5"]),
            (b"\x1e{ }", &["!too_large@0+4"]),
            (b"\x1e{}\n\n\x1e[]", &["!too_large@0+4", "[]@5"]),
            (b"\x1e  \n\x1e[]", &["[]@4"]), // blank and within the limit: skipped
            (b"\x1e   \n\x1e[]", &["!too_large@0+4", "[]@5"]), // blank, but over the limit
        ],
    );
}

// ---------------------------------------------------------------------------------------
// Detection and the `AnyDecoder` enum

#[test]
fn detection_and_decoder() {
    let cases: &[(&[u8], Framing)] = &[
        (b"\x1e{}\n", Framing::JsonSeq),
        (b"Content-Length: 2\r\n\r\n{}", Framing::ContentLength),
        (b"content-type: x\r\ncontent-length: 2\r\n\r\n{}", Framing::ContentLength),
        (b"\xEF\xBB\xBFdata: {}\n\n", Framing::Sse),
        (b"id: 1\ndata: {}\n\n", Framing::Sse),
        (b": hi\n\ndata: {}\n\n", Framing::Sse),
        (b"{}\n", Framing::Ndjson),
        (b"\xEF\xBB\xBF{}\n", Framing::Ndjson),
    ];
    for &(input, framing) in cases {
        assert_eq!(Framing::detect(input), framing);
        assert_eq!(framing.as_str().parse::<Framing>(), Ok(framing));
        let dec = AnyDecoder::new(framing).max_message_size(100);
        assert_eq!(dec.framing(), framing);
        let items = whole(dec, input);
        assert_eq!(items.len(), 1, "{framing}");
        assert!(items[0].as_ref().unwrap().bytes().as_ref().ends_with(b"{}"));
    }
    assert!("auto".parse::<Framing>().is_err());
}

// ---------------------------------------------------------------------------------------
// Chunk-split invariance, for every framing

/// Streams built from pieces that hit each framing's edges.
fn stream(pieces: &'static [&'static [u8]]) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![
            8 => prop::sample::select(pieces).prop_map(|p| p.to_vec()),
            1 => prop::collection::vec(any::<u8>(), 0..4),
            1 => (1usize..40).prop_map(|n| vec![b'x'; n]),
        ],
        0..40,
    )
    .prop_map(|parts| parts.concat())
}

fn chunk_sizes() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(prop_oneof![3 => 1usize..4, 1 => 1usize..64], 1..16)
}

const NDJSON_PIECES: &[&[u8]] = &[
    b"{\"jsonrpc\":\"2.0\",\"method\":\"m\"}",
    b"{}",
    b"\n",
    b"\r",
    b"\r\n",
    b" ",
    b"\t",
    b"\xEF\xBB\xBF",
];

const CL_PIECES: &[&[u8]] = &[
    b"Content-Length: 2\r\n\r\n{}",
    b"content-length: 3\n\n[1]",
    b"Content-Length: 20\r\n\r\n",
    b"Content-Length: ",
    b"Content-Length:",
    b"Content-Type: x\r\n",
    b"CONTENT-LENGTH: 1\r\n",
    b"Content-Length: x\r\n",
    b"X: y\r\n",
    b"\r\n",
    b"\n",
    b"\r",
    b" ",
    b"{}",
    b"2",
    b"junk",
];

const SSE_PIECES: &[&[u8]] = &[
    b"data: ",
    b"data:",
    b"data",
    b"{}",
    b"\n",
    b"\r",
    b"\r\n",
    b":",
    b" ping",
    b"id: 1",
    b"id: 2",
    b"id",
    b"\0",
    b"event: e",
    b"retry: 5",
    b"\xEF\xBB\xBF",
];

const JSON_SEQ_PIECES: &[&[u8]] =
    &[b"\x1e", b"\x1e", b"{}", b"[1]", b"\n", b" ", b"\r", b"junk", b"\xEF\xBB\xBF"];

/// Whole vs chunked, and the buffer bound after every round.
fn invariant(dec: impl Decode + Clone, input: &[u8], sizes: &[usize], bound: usize) {
    let want = whole(dec.clone(), input);
    let got = feed(dec.clone(), input, sizes, bound);
    assert_eq!(got, want);
    let bytewise = feed(dec, input, &[1], bound);
    assert_eq!(bytewise, want);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn ndjson_chunking_is_invisible(input in stream(NDJSON_PIECES), sizes in chunk_sizes(), max in 0usize..40) {
        invariant(NdjsonDecoder::new().max_message_size(max), &input, &sizes, max + 1);
    }

    #[test]
    fn content_length_chunking_is_invisible(input in stream(CL_PIECES), sizes in chunk_sizes(), max in 0usize..8) {
        invariant(ContentLengthDecoder::new().max_message_size(max), &input, &sizes, MAX_HEADER_BLOCK);
    }

    #[test]
    fn sse_chunking_is_invisible(input in stream(SSE_PIECES), sizes in chunk_sizes(), max in 0usize..24) {
        invariant(SseDecoder::new().max_message_size(max), &input, &sizes, max + 6);
    }

    #[test]
    fn json_seq_chunking_is_invisible(input in stream(JSON_SEQ_PIECES), sizes in chunk_sizes(), max in 0usize..24) {
        invariant(JsonSeqDecoder::new().max_message_size(max), &input, &sizes, max + 1);
    }

    #[test]
    fn any_bytes_any_framing(input in prop::collection::vec(any::<u8>(), 0..200), sizes in chunk_sizes(), max in 0usize..16) {
        for framing in Framing::ALL {
            invariant(AnyDecoder::new(framing).max_message_size(max), &input, &sizes, MAX_HEADER_BLOCK);
        }
    }

    #[test]
    fn ndjson_decode_with_equals_decode(input in stream(NDJSON_PIECES), sizes in chunk_sizes(), max in 0usize..40) {
        // `decode_with` for every line but the end of input, like a relay.
        let mut dec = NdjsonDecoder::new().max_message_size(max).recover_ids();
        let mut buf = BytesMut::new();
        let mut lent = Vec::new();
        let mut at = 0;
        let mut chunks = sizes.iter().copied().cycle();
        while at < input.len() {
            let n = chunks.next().unwrap_or(usize::MAX).max(1).min(input.len() - at);
            buf.extend_from_slice(&input[at..at + n]);
            at += n;
            while let Some(item) = dec.decode_with(&mut buf, |line| line.to_vec()) {
                lent.push(item.map_err(|e| (e.offset(), e.len(), dec.recovered_id().map(|id| id.raw().to_vec()))));
            }
            prop_assert!(buf.len() <= max + 1);
        }
        while let Some(item) = dec.decode_eof(&mut buf) {
            lent.push(item.map(|f| f.bytes().to_vec()).map_err(|e| (e.offset(), e.len(), dec.recovered_id().map(|id| id.raw().to_vec()))));
        }
        let mut dec = NdjsonDecoder::new().max_message_size(max).recover_ids();
        let mut buf = BytesMut::from(&input[..]);
        let mut cut = Vec::new();
        while let Some(item) = dec.decode_eof(&mut buf) {
            cut.push(item.map(|f| f.bytes().to_vec()).map_err(|e| (e.offset(), e.len(), dec.recovered_id().map(|id| id.raw().to_vec()))));
        }
        prop_assert_eq!(lent, cut);
    }

    #[test]
    fn ndjson_messages_equals_decoder(input in stream(NDJSON_PIECES)) {
        let borrowed: Vec<(u64, Vec<u8>)> = ndjson_messages(&input)
            .map(|(at, line)| (at as u64, line.to_vec()))
            .collect();
        let decoded: Vec<(u64, Vec<u8>)> = whole(NdjsonDecoder::new(), &input)
            .into_iter()
            .map(|item| {
                let frame = item.unwrap();
                (frame.offset(), frame.bytes().to_vec())
            })
            .collect();
        prop_assert_eq!(borrowed, decoded);
    }

    #[test]
    fn decoded_offsets_point_into_the_stream(input in stream(NDJSON_PIECES), max in 0usize..40) {
        for item in whole(NdjsonDecoder::new().max_message_size(max), &input) {
            match item {
                Ok(f) => {
                    let at = f.offset() as usize;
                    prop_assert_eq!(&input[at..at + f.bytes().len()], f.bytes().as_ref());
                }
                Err(e) => {
                    prop_assert_eq!(e.kind(), FrameErrorKind::TooLarge);
                    prop_assert!(e.len() as usize > max);
                    let line = &input[e.offset() as usize..(e.offset() + e.len()) as usize];
                    prop_assert!(!line.contains(&b'\n'));
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Encoders round-trip (feature `tokio`)

#[cfg(feature = "tokio")]
mod tokio_codec {
    use super::*;
    use futures_util::StreamExt;
    use std::pin::Pin;
    use std::task::{Context, Poll};
    use tokio::io::{AsyncRead, ReadBuf};
    use tokio_util::codec::{Encoder, FramedRead};

    /// An `AsyncRead` that hands out at most `chunk` bytes per read.
    struct Trickle {
        data: Vec<u8>,
        at: usize,
        chunk: usize,
    }

    impl AsyncRead for Trickle {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            let n = self.chunk.min(self.data.len() - self.at).min(buf.remaining());
            let at = self.at;
            buf.put_slice(&self.data[at..at + n]);
            self.at += n;
            Poll::Ready(Ok(()))
        }
    }

    async fn collect<D>(decoder: D, data: &[u8], chunk: usize) -> Vec<Item>
    where
        D: tokio_util::codec::Decoder<Item = Item, Error = std::io::Error>,
    {
        let reader = Trickle { data: data.to_vec(), at: 0, chunk };
        let mut frames = FramedRead::new(reader, decoder);
        let mut out = Vec::new();
        while let Some(item) = frames.next().await {
            out.push(item.expect("no I/O error"));
        }
        out
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_bad_frame_is_an_item_and_the_stream_goes_on() {
        let ndjson = b"{\"a\":1}\n0123456789abcdef0123456789\n{\"b\":2}";
        let cl =
            b"Content-Length: 2\r\n\r\n{}Content-Length: zz\r\n\r\nxx\nContent-Length: 2\r\n\r\n[]";
        let sse = b"data: {}\n\ndata: 0123456789abcdef0123456789abcdef\n\ndata: []\n\n";
        let seq = b"\x1e{}\n\x1e0123456789abcdef0123456789abcdef\n\x1e[]\n";
        for chunk in [1, 7, 4096] {
            let items = collect(NdjsonDecoder::new().max_message_size(20), ndjson, chunk).await;
            assert_eq!(show(&items).len(), 3);
            assert_eq!(items[1].as_ref().unwrap_err().kind(), FrameErrorKind::TooLarge);
            assert!(items[2].is_ok());
            let items = collect(ContentLengthDecoder::new(), cl, chunk).await;
            assert_eq!(show(&items), ["{}@0", "!bad_length@23+25", "[]@48"]);
            let items = collect(SseDecoder::new().max_message_size(30), sse, chunk).await;
            assert_eq!(show(&items), ["{}@0", "!too_large@10+39", "[]@50"]);
            let items =
                collect(AnyDecoder::new(Framing::JsonSeq).max_message_size(30), seq, chunk).await;
            assert_eq!(show(&items), ["{}@0", "!too_large@4+33", "[]@38"]);
        }
    }

    #[tokio::test(flavor = "current_thread")]
    async fn encoders_round_trip() {
        let messages: [&[u8]; 4] = [
            br#"{"jsonrpc":"2.0","method":"a"}"#,
            b"{\"jsonrpc\":\"2.0\",\r\n\"id\":1,\n\"result\":{}}",
            b" [] ",
            b"{}",
        ];
        for framing in Framing::ALL {
            let mut enc = AnyDecoder::new(framing);
            let mut wire = BytesMut::new();
            for msg in messages {
                match enc.encode(msg, &mut wire) {
                    Ok(()) => {}
                    Err(e) => {
                        // NDJSON cannot carry the pretty-printed one.
                        assert_eq!(
                            (framing, e.kind()),
                            (Framing::Ndjson, std::io::ErrorKind::InvalidInput)
                        );
                    }
                }
            }
            assert_eq!(Framing::detect(&wire), framing);
            let items = collect(AnyDecoder::new(framing), &wire, 5).await;
            let got: Vec<Vec<u8>> =
                items.into_iter().map(|i| i.unwrap().into_bytes().to_vec()).collect();
            let want: Vec<Vec<u8>> = messages
                .iter()
                .filter(|m| framing != Framing::Ndjson || !m.contains(&b'\n'))
                .map(|m| match framing {
                    // SSE joins lines with LF.
                    Framing::Sse => m
                        .split(|&b| b == b'\n')
                        .map(|l| l.strip_suffix(b"\r").unwrap_or(l).to_vec())
                        .collect::<Vec<_>>()
                        .join(&b'\n'),
                    _ => m.to_vec(),
                })
                .collect();
            assert_eq!(got, want, "{framing}");
        }
        let mut wire = BytesMut::new();
        assert!(Encoder::<&[u8]>::encode(&mut JsonSeqDecoder::new(), b"\x1e", &mut wire).is_err());
        ContentLengthDecoder::new().encode(b"{}", &mut wire).unwrap();
        assert_eq!(&wire[..], b"Content-Length: 2\r\n\r\n{}");
    }
}

// ---------------------------------------------------------------------------------------
// OwnedMessage agrees with Message

fn assert_same(parser: &Parser, bytes: &[u8]) {
    let owned = OwnedMessage::parse(parser, Bytes::copy_from_slice(bytes));
    match (parser.parse(bytes), owned) {
        (Ok(m), Ok(o)) => {
            assert_eq!(o.kind(), m.kind());
            assert_eq!(o.as_bytes(), m.as_bytes());
            assert_eq!(o.as_message(), m);
            assert_eq!(o.id(), m.id());
            assert_eq!(o.id().map(|i| i.raw()), m.id().map(|i| i.raw()));
            assert_eq!(o.id_bytes().as_deref(), m.id().map(|i| i.raw()));
            assert_eq!(o.method().map(|s| s.raw()), m.method().map(|s| s.raw()));
            assert_eq!(o.method_bytes().as_deref(), m.method().map(|s| s.raw()));
            assert_eq!(o.params(), m.params());
            assert_eq!(o.params_bytes().as_deref(), m.params().map(|r| r.as_bytes()));
            assert_eq!(o.result(), m.result());
            assert_eq!(o.result_bytes().as_deref(), m.result().map(|r| r.as_bytes()));
            assert_eq!(o.error(), m.error());
            assert_eq!(o.error_bytes().as_deref(), m.error().map(|r| r.as_bytes()));
            assert_eq!(o.error_code(), m.error_code());
            assert_eq!(o.error_message().map(|s| s.raw()), m.error_message().map(|s| s.raw()));
            assert_eq!(o.error_data(), m.error_data());
            assert_eq!(o.error_data_bytes().as_deref(), m.error_data().map(|r| r.as_bytes()));
            let clone = o.clone();
            assert_eq!(clone.bytes().as_ptr(), o.bytes().as_ptr()); // O(1), shared
        }
        (Err(e), Err(o)) => {
            assert_eq!(o.as_invalid(), e);
            assert_eq!((o.reason(), o.code(), o.offset()), (e.reason(), e.code(), e.offset()));
            assert_eq!(o.id().map(|i| i.raw()), e.id().map(|i| i.raw()));
            assert_eq!(o.id_bytes().as_deref(), e.id().map(|i| i.raw()));
            assert_eq!(o.response().to_vec(), e.response().to_vec());
            assert_eq!(o.bytes().as_ref(), bytes);
        }
        (m, o) => panic!("borrowed {m:?} but owned {o:?}"),
    }
}

#[test]
fn owned_message_table() {
    for msg in [
        &br#"{"jsonrpc":"2.0","id":"a\u0062","method":"tools\/call","params":{"name":"x"}}"#[..],
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        br#"{"jsonrpc":"2.0","id":18446744073709551617,"result":null}"#,
        br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse \"error\"","data":[1]}}"#,
        br#"{"jsonrpc":"2.0","error":{"code":1,"message":"m"}}"#,
        br#"{"jsonrpc":"2.0","id":7,"method":"m","params":null}"#,
        br#"{"jsonrpc":"2.0","id":"\u00e9","result":1,"error":{}}"#,
        br#"{"jsonrpc":"1.0","id":-0,"method":"m"}"#,
        b"\xEF\xBB\xBF{}",
        b"[]",
        b"",
        b"{\"jsonrpc\":}",
    ] {
        assert_same(&Parser::new(), msg);
        assert_same(&Parser::new().validation(rpcscan::Validation::Envelope), msg);
    }
    let o = OwnedMessage::try_from(Bytes::from_static(
        br#"{"jsonrpc":"2.0","id":1,"result":{"a":[]}}"#,
    ))
    .unwrap();
    assert_eq!(o.kind(), Kind::Result);
    assert_eq!(o.result_bytes().unwrap(), &br#"{"a":[]}"#[..]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn owned_message_agrees_with_message(seed in any::<u64>(), mutate in any::<bool>()) {
        let mut msg = rpcscan_oracle::gen::message(seed);
        if mutate {
            msg = rpcscan_oracle::gen::mutate(seed, &msg);
        }
        assert_same(&Parser::new(), &msg);
    }
}

#[test]
fn owned_types_cross_threads() {
    fn assert_owned<T: Send + Sync + Clone + 'static>() {}
    assert_owned::<OwnedMessage>();
    assert_owned::<rpcscan::OwnedInvalid>();
    assert_owned::<Frame>();
    assert_owned::<FrameError>();
    assert_owned::<AnyDecoder>();
}

#[test]
#[allow(deprecated)]
fn the_former_decoder_name_still_works() {
    let decoder: rpcscan::frame::Decoder = rpcscan::frame::Decoder::new(Framing::Sse);
    assert_eq!(decoder.framing(), Framing::Sse);
}
