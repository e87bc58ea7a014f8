//! The few lines of RFC 4648 base64 (standard alphabet, padded) that the `=?base64?...?=`
//! header form needs: validate, then decode as a byte stream, so a header value can be
//! compared with a body string without a buffer.

/// The value of one base64 alphabet character.
fn sextet(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// Checks `text` is canonical padded base64 (length a multiple of 4, `=` only as the last
/// one or two characters, unused bits zero); returns the decoded length.
///
/// Strict on purpose: two encodings of one value are harmless for a comparison, but a
/// lenient decoder in front of a strict one is how header checks drift apart.
pub(crate) fn validate(text: &[u8]) -> Option<usize> {
    if !text.len().is_multiple_of(4) {
        return None;
    }
    let pads = match text {
        [.., b'=', b'='] => 2,
        [.., b'='] => 1,
        _ => 0,
    };
    let body = text.get(..text.len() - pads)?;
    let mut last = 0u8;
    for &c in body {
        last = sextet(c)?;
    }
    // The bits of the last character that no output byte uses must be zero.
    let unused = match pads {
        2 => last & 0x0F,
        1 => last & 0x03,
        _ => 0,
    };
    (unused == 0).then_some(text.len() / 4 * 3 - pads)
}

/// The decoded bytes of base64 text that [`validate`] accepted (anything else decodes to
/// something, never panics).
pub(crate) struct Decoded<'a> {
    quads: core::slice::ChunksExact<'a, u8>,
    out: [u8; 3],
    at: u8,
    len: u8,
}

pub(crate) fn decode(text: &[u8]) -> Decoded<'_> {
    Decoded { quads: text.chunks_exact(4), out: [0; 3], at: 0, len: 0 }
}

impl Iterator for Decoded<'_> {
    type Item = u8;

    fn next(&mut self) -> Option<u8> {
        if self.at == self.len {
            let quad = self.quads.next()?;
            let mut bits = 0u32;
            let mut chars = 0u8;
            for &c in quad {
                if let Some(v) = sextet(c) {
                    bits = bits << 6 | u32::from(v);
                    chars += 1;
                } else {
                    bits <<= 6;
                }
            }
            // The byte casts below keep the low 8 bits on purpose.
            self.out = [(bits >> 16) as u8, (bits >> 8) as u8, bits as u8];
            self.len = chars.saturating_sub(1);
            self.at = 0;
            if self.len == 0 {
                return None;
            }
        }
        let b = self.out.get(usize::from(self.at)).copied();
        self.at += 1;
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(s: &str) -> Option<Vec<u8>> {
        let n = validate(s.as_bytes())?;
        let v: Vec<u8> = decode(s.as_bytes()).collect();
        assert_eq!(v.len(), n, "{s}");
        Some(v)
    }

    #[test]
    fn rfc4648_vectors() {
        for (plain, b64) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
            ("Hello, 世界", "SGVsbG8sIOS4lueVjA=="),
            (" padded ", "IHBhZGRlZCA="),
            ("=?base64?literal?=", "PT9iYXNlNjQ/bGl0ZXJhbD89"),
            ("\u{ff}\u{fe}", "w7/Dvg=="),
        ] {
            assert_eq!(dec(b64).as_deref(), Some(plain.as_bytes()), "{b64}");
        }
    }

    #[test]
    fn rejects_non_canonical_or_broken() {
        for bad in [
            "Zg", "Zg=", "Zh==", "Zm9=", "Z===", "=Zm9", "Zm 9", "Zm9v\n", "Zm-v", "Zm_v", "====",
            "Zg==Zg==",
        ] {
            assert_eq!(dec(bad), None, "{bad}");
        }
    }
}
