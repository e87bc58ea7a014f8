//! The lookup tables the vector levels share (no level file holds a table another level
//! reads): the byte classes of stage 1 by nibble lookup ([`classes`]), and the UTF-8 tables
//! of the in-block checks ([`utf8`]).

/// Byte classes by nibble lookup (the simdjson method): a byte is in a class when the
/// class's bit is set both in the entry of its low nibble and in the entry of its high
/// nibble, so every class is a product of a low-nibble set and a high-nibble set. Two
/// table pairs give 16 classes; a mask of one class or a union of classes is then one
/// `vptestmb`. On AVX-512 every byte compare and test runs on one port (5): this needs 4
/// shuffles and 8 tests per block where one compare per character needed about 22.
pub(super) mod classes {
    // First pair.
    pub(crate) const QUOTE: u8 = 1 << 0; // 0x22
    pub(crate) const BACKSLASH: u8 = 1 << 1; // 0x5C
    pub(crate) const SPACE: u8 = 1 << 2; // 0x20
    pub(crate) const TAB_LF_CR: u8 = 1 << 3; // 0x09 0x0A 0x0D
    pub(crate) const BRACKET: u8 = 1 << 4; // 0x5B 0x5D 0x7B 0x7D
    pub(crate) const COMMA: u8 = 1 << 5; // 0x2C
    pub(crate) const COLON: u8 = 1 << 6; // 0x3A
    pub(crate) const U: u8 = 1 << 7; // 0x75

    // Second pair.
    pub(crate) const DIGIT: u8 = 1 << 0; // 0x30-0x39
    pub(crate) const HEX_LETTER: u8 = 1 << 1; // 0x41-0x46 0x61-0x66
    pub(crate) const SLASH: u8 = 1 << 2; // 0x2F
    pub(crate) const B_F_N: u8 = 1 << 3; // 0x62 0x66 0x6E
    pub(crate) const R_T: u8 = 1 << 4; // 0x72 0x74

    /// The (low-nibble, high-nibble) tables of classes given as (bit, byte values).
    pub(crate) const fn tables(classes: &[(u8, &[u8])]) -> ([u8; 16], [u8; 16]) {
        let (mut lo, mut hi) = ([0u8; 16], [0u8; 16]);
        let mut c = 0;
        while c < classes.len() {
            let (bit, bytes) = classes[c];
            let mut k = 0;
            while k < bytes.len() {
                lo[(bytes[k] & 0x0F) as usize] |= bit;
                hi[(bytes[k] >> 4) as usize] |= bit;
                k += 1;
            }
            c += 1;
        }
        (lo, hi)
    }

    pub(crate) const FIRST: ([u8; 16], [u8; 16]) = tables(&[
        (QUOTE, b"\""),
        (BACKSLASH, b"\\"),
        (SPACE, b" "),
        (TAB_LF_CR, b"\t\n\r"),
        (BRACKET, b"[]{}"),
        (COMMA, b","),
        (COLON, b":"),
        (U, b"u"),
    ]);
    pub(crate) const SECOND: ([u8; 16], [u8; 16]) = tables(&[
        (DIGIT, b"0123456789"),
        (HEX_LETTER, b"ABCDEFabcdef"),
        (SLASH, b"/"),
        (B_F_N, b"bfn"),
        (R_T, b"rt"),
    ]);
}

/// The UTF-8 tables of the lookup method of Keiser and Lemire ("Validating UTF-8 In Less
/// Than One Instruction Per Byte"; the in-block checks of AVX-512 and AVX2): what a byte's
/// nibbles (and the high nibble of the byte after it) say is wrong, one bit per kind of
/// error; a byte pair is invalid when the three entries share a bit.
#[cfg(target_arch = "x86_64")]
pub(super) mod utf8 {
    const TOO_SHORT: u8 = 1 << 0; // a lead byte (or ASCII) where a continuation must be
    const TOO_LONG: u8 = 1 << 1; // ASCII followed by a continuation byte
    const OVERLONG_3: u8 = 1 << 2; // 11100000 100_____
    const TOO_LARGE: u8 = 1 << 3; // above U+10FFFF
    const SURROGATE: u8 = 1 << 4; // 11101101 101_____
    const OVERLONG_2: u8 = 1 << 5; // 1100000_ 10______
    const TOO_LARGE_1000: u8 = 1 << 6; // 11110101.. 1000____ and above
    const OVERLONG_4: u8 = 1 << 6; // 11110000 1000____
    const TWO_CONTS: u8 = 1 << 7; // two continuation bytes (fine in the middle of a character)
    const CARRY: u8 = TOO_SHORT | TOO_LONG | TWO_CONTS;

    /// By the high nibble of the first byte of a pair.
    pub(crate) const BYTE_1_HIGH: [u8; 16] = [
        TOO_LONG,
        TOO_LONG,
        TOO_LONG,
        TOO_LONG,
        TOO_LONG,
        TOO_LONG,
        TOO_LONG,
        TOO_LONG,
        TWO_CONTS,
        TWO_CONTS,
        TWO_CONTS,
        TWO_CONTS,
        TOO_SHORT | OVERLONG_2,
        TOO_SHORT,
        TOO_SHORT | OVERLONG_3 | SURROGATE,
        TOO_SHORT | TOO_LARGE | TOO_LARGE_1000 | OVERLONG_4,
    ];
    /// By the low nibble of the first byte of a pair.
    pub(crate) const BYTE_1_LOW: [u8; 16] = [
        CARRY | OVERLONG_3 | OVERLONG_2 | OVERLONG_4,
        CARRY | OVERLONG_2,
        CARRY,
        CARRY,
        CARRY | TOO_LARGE,
        CARRY | TOO_LARGE | TOO_LARGE_1000,
        CARRY | TOO_LARGE | TOO_LARGE_1000,
        CARRY | TOO_LARGE | TOO_LARGE_1000,
        CARRY | TOO_LARGE | TOO_LARGE_1000,
        CARRY | TOO_LARGE | TOO_LARGE_1000,
        CARRY | TOO_LARGE | TOO_LARGE_1000,
        CARRY | TOO_LARGE | TOO_LARGE_1000,
        CARRY | TOO_LARGE | TOO_LARGE_1000,
        CARRY | TOO_LARGE | TOO_LARGE_1000 | SURROGATE,
        CARRY | TOO_LARGE | TOO_LARGE_1000,
        CARRY | TOO_LARGE | TOO_LARGE_1000,
    ];
    /// By the high nibble of the second byte of a pair.
    pub(crate) const BYTE_2_HIGH: [u8; 16] = [
        TOO_SHORT,
        TOO_SHORT,
        TOO_SHORT,
        TOO_SHORT,
        TOO_SHORT,
        TOO_SHORT,
        TOO_SHORT,
        TOO_SHORT,
        TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE_1000 | OVERLONG_4,
        TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE,
        TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE,
        TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE,
        TOO_SHORT,
        TOO_SHORT,
        TOO_SHORT,
        TOO_SHORT,
    ];
}

/// The UTF-8 cases the in-block checks are tested with: every two-byte sequence at the
/// offsets around a block boundary, three- and four-byte sequences over every lead byte
/// with edge continuations, and random mixtures of valid characters and broken ones at
/// every length 0..=200 and 8 alignments.
#[cfg(all(test, target_arch = "x86_64"))]
pub(super) fn for_each_utf8_case(mut check: impl FnMut(&[u8])) {
    let mut buf = vec![b'a'; 130];
    for at in [0usize, 1, 61, 62, 63, 64, 65, 126, 127, 128] {
        for b0 in 0..=255u8 {
            for b1 in 0..=255u8 {
                buf.fill(b'a');
                buf[at] = b0;
                if at + 1 < buf.len() {
                    buf[at + 1] = b1;
                }
                check(&buf);
                check(&buf[..(at + 2).min(buf.len())]);
            }
        }
    }
    let edges = [0x00u8, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF];
    for at in [0usize, 61, 62, 63, 64] {
        for lead in 0xC0..=0xFFu8 {
            for &c1 in &edges {
                for &c2 in &edges {
                    for &c3 in &edges {
                        let mut buf = vec![b' '; 70];
                        buf[at..at + 4].copy_from_slice(&[lead, c1, c2, c3]);
                        check(&buf);
                        check(&buf[..at + 3]);
                    }
                }
            }
        }
    }
    let pieces: [&[u8]; 18] = [
        b"a",
        b"{\"k\": ",
        "é".as_bytes(),
        "日本".as_bytes(),
        "😀".as_bytes(),
        "\u{10FFFF}".as_bytes(),
        b"\x80",
        b"\xC3",
        b"\xE2\x82",
        b"\xF0\x9F\x98",
        b"\xC0\xAF",
        b"\xE0\x80\xAF",
        b"\xF0\x80\x80\xAF",
        b"\xED\xA0\x80",
        b"\xF4\x90\x80\x80",
        b"\xF5\x80\x80\x80",
        b"\xFF",
        b"                ",
    ];
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut storage = vec![0u8; 400];
    for len in 0..=200usize {
        for _ in 0..30 {
            let mut msg = Vec::new();
            while msg.len() < len {
                crate::simd::rand::xorshift(&mut seed);
                // Mostly valid characters, so that errors are rare and land anywhere.
                let piece = if seed.is_multiple_of(32) {
                    pieces[6 + (seed >> 8) as usize % 12]
                } else {
                    pieces[(seed >> 8) as usize % 6]
                };
                msg.extend_from_slice(piece);
            }
            msg.truncate(len);
            for align in 0..8 {
                let b = &mut storage[align..align + msg.len()];
                b.copy_from_slice(&msg);
                check(b);
            }
        }
    }
}
