//! The columns of `read_log`'s blocks (`crate::scan::Rows`) in Arrow's layout, and their
//! arrays made without arrow's checks of each block's buffers.
//!
//! A 500 MB log is about 500 blocks of 2,700 rows; arrow's `try_new` constructors check
//! every offset of the four string columns (monotonic, at a character boundary), every
//! string byte (UTF-8) and every dictionary key, about 5 ms of a read's 0.3 s of CPU. Those
//! invariants hold here by construction, so the arrays are made with the `new_unchecked`
//! constructors (the unsafe code of this file; CONTRIBUTING.md lists it):
//!
//! - [`Texts`] appends an offset after each row, the length of its bytes so far: offsets
//!   start at 0 and never decrease, and each lies between two whole values;
//! - each value is UTF-8: a `&str` ([`Texts::push_str`]), or a span the scanner checked as
//!   UTF-8 in both validation modes ([`Texts::push_scanned`]: `method`, `id`, `error.code`,
//!   docs/spec.md §6), which debug builds check again;
//! - dictionary keys are positions in the dictionaries' own lists (`Kind::ALL`,
//!   `Reason::ALL`), found by `position`, or 0.
//!
//! Debug builds (and so `cargo test`) build every array with arrow's checks instead.
#![allow(unsafe_code)]

use std::sync::Arc;

use arrow_array::types::Int8Type;
use arrow_array::{ArrayRef, DictionaryArray, Int8Array, LargeStringArray};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer};
use arrow_schema::ArrowError;

use crate::pool;

/// The string values of a column: its bytes and offsets. Which rows are null is kept apart
/// ([`validity`]); a null row adds an offset and no bytes.
pub(crate) struct Texts {
    data: Vec<u8>,
    offsets: Vec<i64>,
}

impl Default for Texts {
    fn default() -> Texts {
        Texts { data: Vec::new(), offsets: vec![0] }
    }
}

impl Texts {
    /// A row holding `s`.
    #[inline]
    pub(crate) fn push_str(&mut self, s: &str) {
        self.push_bytes(s.as_bytes());
    }

    /// A row holding bytes the scanner checked as UTF-8 in both validation modes: the raw
    /// text of `method`, of a valid message's `id`, of `error.code` (docs/spec.md §6).
    #[inline]
    pub(crate) fn push_scanned(&mut self, raw: &[u8]) {
        debug_assert!(std::str::from_utf8(raw).is_ok(), "not UTF-8: {raw:?}");
        self.push_bytes(raw);
    }

    /// A row holding bytes that may not be UTF-8 (`params.name` in envelope mode, the id of
    /// an invalid message): pushed when they are, else replaced as `from_utf8_lossy` does.
    pub(crate) fn push_lossy(&mut self, raw: &[u8]) {
        // Names are short and mostly ASCII: a byte test, not the validator's call.
        if raw.is_ascii() {
            return self.push_bytes(raw);
        }
        // Borrowed when valid: one validation either way.
        self.push_str(&String::from_utf8_lossy(raw));
    }

    /// A null row (its validity bit is kept apart).
    #[inline]
    pub(crate) fn push_null(&mut self) {
        self.offsets.push(self.data.len() as i64);
    }

    #[inline]
    fn push_bytes(&mut self, v: &[u8]) {
        self.data.extend_from_slice(v);
        self.offsets.push(self.data.len() as i64);
    }

    /// Bytes so far.
    pub(crate) fn bytes(&self) -> usize {
        self.data.len()
    }

    /// Room for `rows` more rows and `bytes` more bytes; a column not yet started takes
    /// its `Vec`s from the pools (`crate::pool`).
    pub(crate) fn reserve(&mut self, rows: usize, bytes: usize) {
        if self.offsets.len() <= 1 && self.data.is_empty() {
            self.offsets = pool::I64.take(rows + 1);
            self.offsets.push(0);
            if bytes > 0 {
                self.data = pool::U8.take(bytes);
            }
        } else {
            self.offsets.reserve(rows);
            self.data.reserve(bytes);
        }
    }

    /// The array (its buffers moved, not copied, and back to the pools when the array is
    /// dropped), with `nulls` (one bit per row); the column starts over.
    pub(crate) fn take_array(&mut self, nulls: Option<NullBuffer>) -> Result<ArrayRef, ArrowError> {
        let offsets = pool::scalars(std::mem::replace(&mut self.offsets, vec![0]));
        let data = pool::buffer(std::mem::take(&mut self.data));
        if cfg!(debug_assertions) {
            return Ok(Arc::new(LargeStringArray::try_new(
                OffsetBuffer::new(offsets),
                data,
                nulls,
            )?));
        }
        if nulls.as_ref().is_some_and(|n| n.len() + 1 != offsets.len()) {
            return Err(ArrowError::InvalidArgumentError(
                "a column's nulls and rows differ".into(),
            ));
        }
        // SAFETY: `offsets` is not empty (it starts as `[0]`) and each push appended
        // `data.len()` after appending bytes, so it starts at 0, never decreases and ends at
        // `data.len()`; each offset lies between two whole values, each of them UTF-8
        // (`push_str` takes a `&str`; `push_scanned` takes spans the scanner checked, see
        // the module's docs), so `data` is UTF-8 and every offset a character boundary.
        // That is what `try_new` checks (debug builds call it above); `nulls` has one bit
        // per row (checked just above).
        let array = unsafe {
            LargeStringArray::new_unchecked(OffsetBuffer::new_unchecked(offsets), data, nulls)
        };
        Ok(Arc::new(array))
    }
}

/// A dictionary-encoded column: `keys` index `names`, each key a position in `names`' list
/// (`Kind::ALL` / `Reason::ALL`, the lists `names` was made from).
pub(crate) fn dictionary(keys: Int8Array, names: ArrayRef) -> Result<ArrayRef, ArrowError> {
    if cfg!(debug_assertions) {
        return Ok(Arc::new(DictionaryArray::<Int8Type>::try_new(keys, names)?));
    }
    // SAFETY: every key is `kind_key` / `reason_key` of a value (`position` in the list the
    // dictionary holds, or 0) and the dictionaries are not empty, so each key indexes
    // `names`; `try_new` checks that (debug builds call it above). Null keys are masked.
    Ok(Arc::new(unsafe { DictionaryArray::<Int8Type>::new_unchecked(keys, names) }))
}

/// Bit `b` of each row's presence byte (`crate::scan::Rows`): set when nullable column `b`
/// has a value in that row.
pub(crate) const BITS: usize = 7;

/// The validity of each of the [`BITS`] nullable columns from the rows' presence bytes, one
/// bitmap per bit, `None` for a column with no null; 8 rows at a time (a multiply gathers
/// one bit of 8 bytes), instead of a bit appended per row and column as they come.
pub(crate) fn validity(present: &[u8]) -> [Option<NullBuffer>; BITS] {
    // The bits set in every row: those columns have no null.
    let all = present.iter().fold(u8::MAX, |acc, &p| acc & p);
    let words = present.len().div_ceil(64);
    let mut maps: [Vec<u64>; BITS] = std::array::from_fn(|b| {
        if all & (1 << b) != 0 {
            Vec::new()
        } else {
            Vec::with_capacity(words)
        }
    });
    for chunk in present.chunks(64) {
        let mut word = [0u64; BITS];
        for (j, eight) in chunk.chunks(8).enumerate() {
            let x = match <[u8; 8]>::try_from(eight) {
                Ok(bytes) => u64::from_le_bytes(bytes),
                // The last rows of the block.
                Err(_) => eight.iter().rev().fold(0u64, |x, &b| x << 8 | u64::from(b)),
            };
            for (b, w) in word.iter_mut().enumerate() {
                *w |= gather((x >> b) & 0x0101_0101_0101_0101) << (8 * j);
            }
        }
        for (map, w) in maps.iter_mut().zip(word) {
            if map.capacity() > 0 {
                map.push(w);
            }
        }
    }
    maps.map(|words| {
        (!words.is_empty())
            .then(|| NullBuffer::new(BooleanBuffer::new(Buffer::from_vec(words), 0, present.len())))
    })
}

/// Bit 0 of each of the 8 bytes of `x` (every other bit clear), as 8 bits: byte `i`'s in
/// bit `i`. The multiply puts byte `i`'s bit at bit `56 + i`, and no two partial products
/// meet (`8i - 7j` differs for every pair `i`, `j`), so nothing carries.
#[inline]
fn gather(x: u64) -> u64 {
    x.wrapping_mul(0x0102_0408_1020_4080) >> 56
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validity_is_each_bit_of_the_presence_bytes() {
        for len in [0usize, 1, 7, 8, 9, 63, 64, 65, 130, 1000] {
            let present: Vec<u8> =
                (0..len).map(|i| ((i * 37 + i / 3) % 256) as u8 | 0x40).collect();
            let maps = validity(&present);
            for (b, map) in maps.iter().enumerate() {
                let want: Vec<bool> = present.iter().map(|p| p & (1 << b) != 0).collect();
                match map {
                    None => assert!(want.iter().all(|&v| v), "bit {b}, {len} rows"),
                    Some(nulls) => {
                        let got: Vec<bool> = (0..len).map(|i| nulls.is_valid(i)).collect();
                        assert_eq!(got, want, "bit {b}, {len} rows");
                    }
                }
            }
            // Bit 6 is set in every row: no bitmap.
            assert!(maps[6].is_none());
        }
    }

    #[test]
    fn gather_packs_the_low_bit_of_each_byte() {
        for v in 0..=255u64 {
            let spread = (0..8).fold(0u64, |acc, i| acc | ((v >> i) & 1) << (8 * i));
            assert_eq!(gather(spread), v);
        }
    }

    #[test]
    fn texts_make_the_array_arrow_checks() {
        let mut t = Texts::default();
        t.push_str("é");
        t.push_null();
        t.push_scanned(b"\"a\"");
        t.push_lossy(b"\xff");
        let nulls = NullBuffer::from(vec![true, false, true, true]);
        let array = t.take_array(Some(nulls)).unwrap();
        let strings = array.as_any().downcast_ref::<LargeStringArray>().unwrap();
        let got: Vec<Option<&str>> = strings.iter().collect();
        assert_eq!(got, [Some("é"), None, Some("\"a\""), Some("\u{fffd}")]);
        // Started over.
        assert_eq!(t.take_array(None).unwrap().len(), 0);
    }
}
