//! tokio-util codecs (feature `tokio`): every decoder of [`crate::frame`] is also a
//! `tokio_util::codec::Decoder` and `Encoder`.
//!
//! `tokio_util::codec::FramedRead` ends the stream at the first `Err` a decoder returns,
//! so a bad frame is an *item* here: `Item = Result<Frame, FrameError>`, and `Err` is kept
//! for I/O errors.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! use futures_util::StreamExt;
//! use rpcscan::frame::NdjsonDecoder;
//! use tokio_util::codec::FramedRead;
//!
//! let input = &b"{\"a\":1}\n0123456789abcdef\n{}\n"[..];
//! let mut frames = FramedRead::new(input, NdjsonDecoder::new().max_message_size(15));
//! let mut oks = 0;
//! let mut errors = 0;
//! while let Some(item) = frames.next().await {
//!     match item.unwrap() {
//!         Ok(_) => oks += 1,
//!         Err(_) => errors += 1,
//!     }
//! }
//! assert_eq!((oks, errors), (2, 1));
//! # }
//! ```
//!
//! The encoders write any `AsRef<[u8]>` message in the framing's envelope: an NDJSON line
//! and `\n`; a `Content-Length` header, a blank line and the body; one `data:` line per
//! line of the message and a blank line (SSE); RS, the message, LF (json-seq). A message
//! the envelope cannot carry (an LF for NDJSON, an RS for json-seq; neither can appear in
//! compact valid JSON) is refused with [`std::io::ErrorKind::InvalidInput`].

use std::io;

use bytes::{BufMut, BytesMut};
use memchr::{memchr, memchr2};
use tokio_util::codec::{Decoder as TokioDecoder, Encoder};

use super::{
    AnyDecoder, ContentLengthDecoder, Decode, Frame, FrameError, JsonSeqDecoder, NdjsonDecoder,
    SseDecoder,
};

macro_rules! tokio_decoder {
    ($($ty:ty),*) => {$(
        impl TokioDecoder for $ty {
            type Item = Result<Frame, FrameError>;
            type Error = io::Error;

            fn decode(&mut self, src: &mut BytesMut) -> io::Result<Option<Self::Item>> {
                Ok(Decode::decode(self, src))
            }

            fn decode_eof(&mut self, src: &mut BytesMut) -> io::Result<Option<Self::Item>> {
                Ok(Decode::decode_eof(self, src))
            }
        }
    )*};
}

tokio_decoder!(NdjsonDecoder, ContentLengthDecoder, SseDecoder, JsonSeqDecoder, AnyDecoder);

fn refuse(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, what.to_owned())
}

impl<T: AsRef<[u8]>> Encoder<T> for NdjsonDecoder {
    type Error = io::Error;

    fn encode(&mut self, msg: T, dst: &mut BytesMut) -> io::Result<()> {
        let msg = msg.as_ref();
        if memchr(b'\n', msg).is_some() {
            return Err(refuse("an NDJSON message cannot contain a line feed"));
        }
        dst.reserve(msg.len() + 1);
        dst.put_slice(msg);
        dst.put_u8(b'\n');
        Ok(())
    }
}

impl<T: AsRef<[u8]>> Encoder<T> for ContentLengthDecoder {
    type Error = io::Error;

    fn encode(&mut self, msg: T, dst: &mut BytesMut) -> io::Result<()> {
        let msg = msg.as_ref();
        let digits = itoa(msg.len() as u64);
        let n = digits.len();
        dst.reserve(msg.len() + n + 20);
        dst.put_slice(b"Content-Length: ");
        dst.put_slice(digits.as_slice());
        dst.put_slice(b"\r\n\r\n");
        dst.put_slice(msg);
        Ok(())
    }
}

impl<T: AsRef<[u8]>> Encoder<T> for SseDecoder {
    type Error = io::Error;

    fn encode(&mut self, msg: T, dst: &mut BytesMut) -> io::Result<()> {
        let mut rest = msg.as_ref();
        dst.reserve(rest.len() + 8);
        // Each line of the message becomes a `data:` line; the decoder joins them with
        // `\n`, so a message with CR or CRLF line breaks comes back with LF ones.
        loop {
            dst.put_slice(b"data: ");
            match memchr2(b'\r', b'\n', rest) {
                Some(i) => {
                    dst.put_slice(rest.get(..i).unwrap_or_default());
                    dst.put_u8(b'\n');
                    let skip = if rest.get(i..i + 2) == Some(b"\r\n") { 2 } else { 1 };
                    rest = rest.get(i + skip..).unwrap_or_default();
                }
                None => {
                    dst.put_slice(rest);
                    dst.put_slice(b"\n\n");
                    return Ok(());
                }
            }
        }
    }
}

impl<T: AsRef<[u8]>> Encoder<T> for JsonSeqDecoder {
    type Error = io::Error;

    fn encode(&mut self, msg: T, dst: &mut BytesMut) -> io::Result<()> {
        let msg = msg.as_ref();
        if memchr(0x1E, msg).is_some() {
            return Err(refuse("a json-seq record cannot contain a record separator"));
        }
        dst.reserve(msg.len() + 2);
        dst.put_u8(0x1E);
        dst.put_slice(msg);
        dst.put_u8(b'\n');
        Ok(())
    }
}

impl<T: AsRef<[u8]>> Encoder<T> for AnyDecoder {
    type Error = io::Error;

    fn encode(&mut self, msg: T, dst: &mut BytesMut) -> io::Result<()> {
        match self {
            AnyDecoder::Ndjson(d) => d.encode(msg, dst),
            AnyDecoder::ContentLength(d) => d.encode(msg, dst),
            AnyDecoder::Sse(d) => d.encode(msg, dst),
            AnyDecoder::JsonSeq(d) => d.encode(msg, dst),
        }
    }
}

/// Decimal digits of `n`, without allocating.
fn itoa(mut n: u64) -> Digits {
    let mut buf = [0u8; 20];
    let mut at = buf.len();
    loop {
        at -= 1;
        if let Some(slot) = buf.get_mut(at) {
            *slot = b'0' + (n % 10) as u8;
        }
        n /= 10;
        if n == 0 || at == 0 {
            return Digits { buf, at };
        }
    }
}

struct Digits {
    buf: [u8; 20],
    at: usize,
}

impl Digits {
    fn len(&self) -> usize {
        self.buf.len() - self.at
    }

    fn as_slice(&self) -> &[u8] {
        self.buf.get(self.at..).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits() {
        for n in [0u64, 7, 10, 12345, u64::MAX] {
            let d = itoa(n);
            assert_eq!(d.as_slice(), n.to_string().as_bytes());
        }
    }
}
