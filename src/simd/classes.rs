//! Byte classes by nibble lookup (the simdjson method): a byte is in a class when the
//! class's bit is set both in the entry of its low nibble and in the entry of its high
//! nibble, so every class is a product of a low-nibble set and a high-nibble set. Two
//! table pairs give 16 classes; a mask of one class or a union of classes is then one
//! `vptestmb`. On AVX-512 every byte compare and test runs on one port (5): this needs 4
//! shuffles and 8 tests per block where one compare per character needed about 22.

// First pair.
pub(super) const QUOTE: u8 = 1 << 0; // 0x22
pub(super) const BACKSLASH: u8 = 1 << 1; // 0x5C
pub(super) const SPACE: u8 = 1 << 2; // 0x20
pub(super) const TAB_LF_CR: u8 = 1 << 3; // 0x09 0x0A 0x0D
pub(super) const BRACKET: u8 = 1 << 4; // 0x5B 0x5D 0x7B 0x7D
pub(super) const COMMA: u8 = 1 << 5; // 0x2C
pub(super) const COLON: u8 = 1 << 6; // 0x3A
pub(super) const U: u8 = 1 << 7; // 0x75

// Second pair.
pub(super) const DIGIT: u8 = 1 << 0; // 0x30-0x39
pub(super) const HEX_LETTER: u8 = 1 << 1; // 0x41-0x46 0x61-0x66
pub(super) const SLASH: u8 = 1 << 2; // 0x2F
pub(super) const B_F_N: u8 = 1 << 3; // 0x62 0x66 0x6E
pub(super) const R_T: u8 = 1 << 4; // 0x72 0x74

/// The (low-nibble, high-nibble) tables of classes given as (bit, byte values).
pub(super) const fn tables(classes: &[(u8, &[u8])]) -> ([u8; 16], [u8; 16]) {
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

pub(super) const FIRST: ([u8; 16], [u8; 16]) = tables(&[
    (QUOTE, b"\""),
    (BACKSLASH, b"\\"),
    (SPACE, b" "),
    (TAB_LF_CR, b"\t\n\r"),
    (BRACKET, b"[]{}"),
    (COMMA, b","),
    (COLON, b":"),
    (U, b"u"),
]);
pub(super) const SECOND: ([u8; 16], [u8; 16]) = tables(&[
    (DIGIT, b"0123456789"),
    (HEX_LETTER, b"ABCDEFabcdef"),
    (SLASH, b"/"),
    (B_F_N, b"bfn"),
    (R_T, b"rt"),
]);
