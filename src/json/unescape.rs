//! Decoding a string into a buffer: [`Str::decode_into`], the byte loop of `text.rs`
//! with the kernels' bulk decoder in front (here, in a layer that may call the kernels).

use crate::simd::{self, Kernels};
use crate::text::Str;

impl Str<'_> {
    /// Appends the decoded bytes to `out` (a reused buffer: no allocation once it is large
    /// enough). UTF-8, except that a lone surrogate escape comes out in the generalized
    /// WTF-8 form, which is not UTF-8 (a message holding one is then `invalid_utf8`), and
    /// bytes that are not UTF-8 are copied as they are.
    ///
    /// An escaped message inside a log record has an escape every few bytes; where the CPU
    /// has a byte compress (AVX-512 VBMI2), blocks of one-character escapes are decoded 64
    /// bytes at a time.
    ///
    /// ```
    /// let record = rpcscan::Raw::lenient(br#"{"payload":"{\"id\":1,\"x\":\"\u00e9\"}"}"#);
    /// let payload = record.get("payload").as_str().unwrap();
    /// let mut buf = Vec::new();
    /// payload.decode_into(&mut buf);
    /// assert_eq!(buf, r#"{"id":1,"x":"é"}"#.as_bytes());
    /// ```
    pub fn decode_into(&self, out: &mut Vec<u8>) {
        // The level is looked up only when the string has escapes (the bulk decoder runs
        // once, then the byte loop).
        self.decode_into_with(
            out,
            |raw, dst| simd::with_kernels!(simd::detected(), k => k.unescape_simple(raw, dst)),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bulk decoder of each level against the code-point decoder: what it writes is
    /// the decoding of what it read, at every length, offset and start alignment; on a
    /// string of one-character escapes only it reads everything (where the level has a
    /// kernel), so the byte loop is left nothing.
    #[test]
    fn bulk_unescape_agrees_at_every_level() {
        use crate::simd::tests::{levels, unescape_simple_at};
        // The levels with a bulk decoder on this CPU (`levels()` holds supported ones).
        let kernel = |level: crate::simd::Level| {
            cfg!(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))
                && matches!(level, crate::simd::Level::Avx2 | crate::simd::Level::Avx512)
        };
        let check = |raw: &[u8], simple_only: bool| {
            let want_all: Vec<u8> = Str::from_raw(raw).decoded_bytes().collect();
            for level in levels() {
                let mut dst = vec![0u8; raw.len() + 8];
                let (r, w) = unescape_simple_at(level, raw, &mut dst);
                // What it read holds one-character escapes only: each decodes to one byte,
                // every other byte is copied (a block may end inside a character).
                let mut want = Vec::new();
                let mut i = 0;
                while let Some(&b) = raw[..r].get(i) {
                    if b != b'\\' {
                        want.push(b);
                        i += 1;
                        continue;
                    }
                    want.push(match raw[..r].get(i + 1) {
                        Some(b'b') => 0x08,
                        Some(b'f') => 0x0C,
                        Some(b'n') => b'\n',
                        Some(b'r') => b'\r',
                        Some(b't') => b'\t',
                        Some(&e @ (b'"' | b'\\' | b'/')) => e,
                        e => panic!("{level:?} read the escape {e:?}"),
                    });
                    i += 2;
                }
                assert_eq!(&dst[..w], &want[..], "{level:?} on {:?}", String::from_utf8_lossy(raw));
                // Where the level has a kernel, it reads all of such a string: the byte
                // loop is left nothing.
                if simple_only && kernel(level) {
                    assert_eq!(r, raw.len(), "{level:?} stopped early");
                }
            }
            // The whole decoder at the level in use (CI runs the suite at every level).
            let mut out = b"kept".to_vec();
            Str::from_raw(raw).decode_into(&mut out);
            assert_eq!(&out[4..], &want_all[..], "{:?}", String::from_utf8_lossy(raw));
        };
        #[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
        if crate::simd::x86::has_avx512_vbmi2() {
            let mut dst = [0u8; 80];
            let raw = br#"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"a\\b\/c\n\t\r\b\f\"}"#;
            assert_eq!(unescape_simple_at(crate::simd::Level::Avx512, raw, &mut dst).0, raw.len());
        }
        #[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
        if crate::simd::x86::has_avx2_popcnt() {
            let mut dst = [0u8; 80];
            let raw = br#"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"a\\b\/c\n\t\r\b\f\"}"#;
            let (r, w) = unescape_simple_at(crate::simd::Level::Avx2, raw, &mut dst);
            assert_eq!(r, raw.len());
            assert_eq!(
                &dst[..w],
                b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"a\\b/c\n\t\r\x08\x0c\"}"
            );
        }
        let pieces: [&[u8]; 12] = [
            b"a",
            br#"\""#,
            br"\\",
            br"\/",
            br"\n",
            br"\t",
            br"\b",
            br"\f",
            br"\r",
            b"\xc3\xa9",
            b"{",
            b"xyz",
        ];
        let others: [&[u8]; 4] = [br"\u00e9", br"\ud83d\ude00", br"\x", b"\\\xc3\xa9"];
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let step = if cfg!(miri) { 301 } else { 1 };
        for round in (0..3000).step_by(step) {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let mut raw = Vec::new();
            for n in 0..(seed >> 57) as usize + round % 40 {
                let pick = seed.rotate_left(n as u32 * 7) as usize;
                raw.extend_from_slice(pieces[pick % pieces.len()]);
            }
            check(&raw, true);
            // Something the kernel leaves to the byte loop, somewhere.
            let other = others[round % others.len()];
            let mut at = (seed >> 20) as usize % (raw.len() + 1);
            while raw.get(at).is_some_and(|b| b & 0xC0 == 0x80) {
                at -= 1; // not inside a character: the text stays UTF-8
            }
            let mut mixed = raw.clone();
            mixed.splice(at..at, other.iter().copied());
            check(&mixed, false);
            // A lone backslash at the end.
            check(&[&raw[..], b"\\"].concat(), false);
        }
        // An escape cut by every block boundary, at every start alignment.
        let lengths: Vec<usize> = if cfg!(miri) { vec![0, 63, 64] } else { (0..200).collect() };
        for len in lengths {
            for esc in [&br#"\""#[..], br"\\", br"\n", br"\u0041"] {
                let mut raw = vec![b'x'; len];
                raw.extend_from_slice(esc);
                raw.extend_from_slice(&[b'y'; 70]);
                crate::simd::tests::at_each_alignment(&raw, |buf| check(buf, esc[1] != b'u'));
            }
        }
    }

    /// What follows a backslash: each kernel takes exactly the eight one-character escapes
    /// in bulk and leaves every other byte (`\u`, anything else) to the byte loop, at
    /// every position in the block.
    #[test]
    fn bulk_unescape_takes_exactly_the_simple_escapes() {
        use crate::simd::tests::{levels, unescape_simple_at};
        let simple = br#""\/bfnrt"#;
        let positions: &[usize] = if cfg!(miri) { &[0, 62] } else { &[0, 7, 31, 32, 62, 63, 64] };
        for level in levels() {
            if unescape_simple_at(level, b"plain", &mut [0u8; 16]).0 == 0 {
                continue; // no kernel at this level
            }
            for b in 0..=255u8 {
                for &at in positions {
                    let mut raw = vec![b'a'; at];
                    raw.extend_from_slice(&[b'\\', b]);
                    raw.extend_from_slice(&[b'z'; 70]);
                    let mut dst = vec![0u8; raw.len() + 8];
                    let (r, _) = unescape_simple_at(level, &raw, &mut dst);
                    if simple.contains(&b) {
                        assert_eq!(r, raw.len(), "{level:?} stopped at \\{} at {at}", b as char);
                    } else {
                        // Stopped before the block holding the escape: it never reads it.
                        assert!(r <= at, "{level:?} read \\{b:#04x} at {at}: {r}");
                    }
                }
            }
        }
    }
}
