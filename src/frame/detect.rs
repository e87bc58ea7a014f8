//! Guessing a stream's framing from its first bytes (`--framing auto`, docs/spec.md §7).

use super::Framing;

const BOM: &[u8] = b"\xEF\xBB\xBF";

impl Framing {
    /// The framing docs/spec.md §7 infers from the first bytes of a stream.
    ///
    /// First byte `0x1E` → json-seq. Otherwise, after an optional byte order mark, a first
    /// line that starts with `Content-Length:` or `Content-Type:` (any case) →
    /// Content-Length; one that starts with `data:`, `event:`, `id:`, `retry:` or `:` (SSE
    /// field names are case-sensitive) → SSE; anything else → NDJSON. Give it at least the
    /// first line (or the first 64 bytes): a marker cut short reads as NDJSON.
    ///
    /// ```
    /// use rpcscan::frame::Framing;
    /// assert_eq!(Framing::detect(b"\x1e{}"), Framing::JsonSeq);
    /// assert_eq!(Framing::detect(b"content-length: 2\r\n\r\n{}"), Framing::ContentLength);
    /// assert_eq!(Framing::detect(b"\xEF\xBB\xBFevent: message\n"), Framing::Sse);
    /// assert_eq!(Framing::detect(b": keep-alive\n\n"), Framing::Sse);
    /// assert_eq!(Framing::detect(b"{\"jsonrpc\":\"2.0\"}\n"), Framing::Ndjson);
    /// ```
    pub fn detect(first_bytes: &[u8]) -> Framing {
        if first_bytes.first() == Some(&0x1E) {
            return Framing::JsonSeq;
        }
        let line = first_bytes.strip_prefix(BOM).unwrap_or(first_bytes);
        let starts_any_case = |prefix: &[u8]| {
            line.get(..prefix.len()).is_some_and(|head| head.eq_ignore_ascii_case(prefix))
        };
        if starts_any_case(b"content-length:") || starts_any_case(b"content-type:") {
            return Framing::ContentLength;
        }
        const SSE: [&[u8]; 5] = [b"data:", b"event:", b"id:", b"retry:", b":"];
        if SSE.iter().any(|field| line.starts_with(field)) {
            return Framing::Sse;
        }
        Framing::Ndjson
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        let cases: &[(&[u8], Framing)] = &[
            (b"", Framing::Ndjson),
            (b"\x1e", Framing::JsonSeq),
            (b"\xEF\xBB\xBF\x1e", Framing::Ndjson), // RS must be the very first byte
            (b"CONTENT-TYPE: x\r\n", Framing::ContentLength),
            (b"\xEF\xBB\xBFContent-Length: 1\r\n", Framing::ContentLength),
            (b"Content-Length 1\r\n", Framing::Ndjson),
            (b"Content-Len", Framing::Ndjson),
            (b"data: {}\n\n", Framing::Sse),
            (b"id:1\n", Framing::Sse),
            (b"retry: 10\n", Framing::Sse),
            (b"Data: x\n", Framing::Ndjson),
            (b"\xEF\xBB\xBF{}\n", Framing::Ndjson),
            (b" data: x\n", Framing::Ndjson),
        ];
        for &(input, want) in cases {
            assert_eq!(Framing::detect(input), want, "{:?}", String::from_utf8_lossy(input));
        }
    }
}
