//! Stage 1 of strict mode's fast path: the token stream of a whole message, 64 bytes at a
//! time, with every string byte validated in bulk.
//!
//! Per block, a kernel level builds the raw masks ([`TokenMasks`] and [`EscapeMasks`], the
//! latter for every block: skipping it for blocks without backslashes is a branch that real
//! traffic mispredicts, which costs more than the masks). Everything after that is shared
//! bit logic, the simdjson method: escaped characters from runs of backslashes, the
//! in-string mask by prefix XOR of the unescaped quotes, then
//!
//! - **checks** on string contents: no control character, every escaped character one of
//!   `"\/bfnrtu`, four hex digits after each `\u` (carried across blocks);
//! - **tokens**: the structural characters `{}[],:` outside strings, every unescaped quote
//!   (opening and closing), and the first byte of every run of other non-whitespace bytes
//!   outside strings (a number, a literal, or garbage — stage 2 parses it exactly and checks
//!   that the parse used the whole run);
//! - **UTF-8**, on levels that check it in the block (AVX-512 and AVX2: the lookup method
//!   on the registers stage 1 already holds, one branch for an all-ASCII block); its verdict is
//!   gathered in the carry and read once by [`Cursor::finish`], so no token waits for it.
//!   Other levels leave UTF-8 to one validator call (simdutf8) over the range of blocks
//!   that hold non-ASCII bytes ([`Cursor::non_ascii`]). The in-block check pays where many
//!   blocks hold non-ASCII bytes (MCP traffic carries text in many languages): it works on
//!   the register stage 1 already loaded instead of reading those blocks a second time.
//!
//! [`Cursor::next`] hands the tokens to stage 2 (`scan::stage2`) one at a time, computing a
//! block only when the previous one is used up; a block with a failed check stops the
//! stream. Nothing is stored, so nothing is allocated. Blocks start at the message's first
//! byte; the last partial block is copied into a space-padded buffer, so nothing is read
//! past the slice.
//!
//! **Long strings.** After a block with no token and no backslash that ends inside a
//! string, the cursor hands the bytes after it to the level's *run* kernel
//! ([`run`]): whole 64-byte windows with no quote, backslash or control byte are passed
//! over with one test each (and, on levels that check UTF-8 in the block, that check),
//! without the rest of the block's work. Such a window would have produced no token, no
//! failed check and no change to the carry but the UTF-8 step's, so the token stream is the
//! same; the block loop takes over at the first window that is not plain.
//!
//! The fast path only ever says "valid, and here is the walk" or "don't know": any failed
//! check, unexpected token or early end sends the message to the exact byte-by-byte path,
//! which finds the first offending byte and its reason.

/// The raw masks of one 64-byte block (bit i = byte i).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TokenMasks {
    pub(crate) quote: u64,
    pub(crate) backslash: u64,
    /// Bytes below 0x20.
    pub(crate) control: u64,
    /// Space, tab, line feed, carriage return.
    pub(crate) space: u64,
    /// `{`, `}`, `[`, `]`, `,`, `:`.
    pub(crate) op: u64,
    /// Bytes with the high bit set (not ASCII).
    pub(crate) high: u64,
}

/// The masks the escape checks need (built for every block).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct EscapeMasks {
    /// Bytes that may follow a backslash: `"`, `\`, `/`, `b`, `f`, `n`, `r`, `t`, `u`.
    pub(crate) allowed: u64,
    /// `u`.
    pub(crate) unicode: u64,
    /// `0-9`, `a-f`, `A-F`.
    pub(crate) hex: u64,
}

/// What a level's UTF-8 step hands from one block to the next: the state of the check
/// inside stage 1 (levels that validate there: AVX-512, AVX2), or whether the block had a byte
/// that is not ASCII (levels that leave UTF-8 to one validator call over those blocks:
/// [`range_utf8`]).
#[derive(Clone, Copy)]
pub(crate) struct Utf8Carry {
    /// The last four bytes of the previous block (spaces after an all-ASCII one, which
    /// the check treats alike).
    // Read only by levels that check UTF-8 in the block, which not every target has.
    #[allow(dead_code)]
    pub(crate) tail: u32,
    /// The previous block ended inside a multi-byte character.
    pub(crate) incomplete: bool,
    /// A block so far was not UTF-8. Read once, at the end of the message: a verdict
    /// that every block waited for would put the check on the token stream's path.
    pub(crate) invalid: bool,
    /// The last block had a byte that is not ASCII (kept by [`range_utf8`] only).
    non_ascii: bool,
}

impl Utf8Carry {
    /// The `tail` after an all-ASCII block (or before the first one).
    pub(crate) const ASCII_TAIL: u32 = u32::from_le_bytes([b' '; 4]);
}

impl Default for Utf8Carry {
    fn default() -> Self {
        Utf8Carry { tail: Self::ASCII_TAIL, incomplete: false, invalid: false, non_ascii: false }
    }
}

/// What one block hands to the next.
#[derive(Default)]
pub(crate) struct Carry {
    /// 1 when the previous block ended with an escaping backslash.
    prev_escaped: u64,
    /// All ones when the previous block ended inside a string.
    in_string: u64,
    /// 1 when the previous block ended with a scalar byte.
    prev_scalar: u64,
    /// Bytes of this block that must be hex digits (a `\u` near the end of the previous one).
    hex_carry: u64,
    /// The previous block had no backslash: when it was all string contents, the string is
    /// worth a long-string run (escape-dense text would stop the run at once, every block).
    no_backslash: bool,
    /// For the level's UTF-8 step.
    pub(crate) utf8: Utf8Carry,
}

/// Checks one block: its tokens, or `None` when a check failed. Every level's block
/// function is this, with that level's kernels inlined (`masks`, `escapes`, `prefix_xor`,
/// `utf8`); `C` is what the kernels read (64 bytes, or a loaded vector register).
///
/// `utf8` is given the block, its non-ASCII mask and the UTF-8 carry, which it updates
/// (an invalid block sets `invalid`, read by [`Cursor::finish`]); levels that leave UTF-8
/// to one validator call over the range of non-ASCII blocks after the walk pass
/// [`range_utf8`] (and say so in [`Blocks::RANGE_UTF8`]).
#[inline(always)]
pub(crate) fn block<C>(
    carry: &mut Carry,
    chunk: &C,
    masks: impl Fn(&C) -> TokenMasks,
    escapes: impl Fn(&C) -> EscapeMasks,
    prefix_xor: impl Fn(u64) -> u64,
    utf8: impl Fn(&C, u64, &mut Utf8Carry),
) -> Option<u64> {
    let m = masks(chunk);
    utf8(chunk, m.high, &mut carry.utf8);
    let escaped = super::skipper::escaped(&mut carry.prev_escaped, m.backslash);
    carry.no_backslash = m.backslash == 0;
    let quotes = m.quote & !escaped;
    let in_string = prefix_xor(quotes) ^ carry.in_string;
    carry.in_string = ((in_string as i64) >> 63) as u64;
    // String contents: inside, not the opening quote (the closing one is not inside).
    let content = in_string & !quotes;
    let e = escapes(chunk);
    let escaped_content = escaped & content;
    let (hex, hex_carry) = hex_after(escaped_content & e.unicode);
    let bad =
        (m.control & content) | (escaped_content & !e.allowed) | ((hex | carry.hex_carry) & !e.hex);
    carry.hex_carry = hex_carry;
    let op = m.op & !in_string;
    // Outside strings, neither whitespace, structural nor a quote: numbers and literals.
    let scalar = !in_string & !quotes & !m.space & !m.op;
    let starts = scalar & !((scalar << 1) | carry.prev_scalar);
    carry.prev_scalar = scalar >> 63;
    (bad == 0).then_some(op | quotes | starts)
}

/// The UTF-8 step of levels that leave UTF-8 to one validator call after the walk: it only
/// notes whether the block has a byte that is not ASCII, for [`Cursor::non_ascii`].
#[inline(always)]
pub(crate) fn range_utf8<C>(_: &C, high: u64, utf8: &mut Utf8Carry) {
    utf8.non_ascii = high != 0;
}

/// A level's stage-1 kernels (part of `simd::Kernels`): the block function ([`block`]
/// with its kernels) and the long-string run ([`run`] with its window test).
pub(crate) trait Blocks {
    /// The level leaves UTF-8 to one validator call over [`Cursor::non_ascii`] (its
    /// block's UTF-8 step is [`range_utf8`]), which the cursor then keeps up per block; a
    /// level that checks UTF-8 in the block does no such bookkeeping (a constant, so the
    /// work is compiled out, not skipped at run time).
    const RANGE_UTF8: bool;
    /// One block (64 bytes, or the last 1 to 63 read as if followed by spaces).
    fn block(&self, carry: &mut Carry, bytes: &[u8]) -> Option<u64>;
    /// How many leading bytes of `rest` (a multiple of 64) are whole windows with no quote,
    /// backslash or control byte, with the level's UTF-8 step run on each; and whether any
    /// of them held a byte that is not ASCII.
    fn run(&self, utf8: &mut Utf8Carry, rest: &[u8]) -> (usize, bool);
}

/// [`Blocks`] from two closures (tests run stage 1 with the kernels they pick).
#[cfg(test)]
pub(crate) struct Stage1<B, R> {
    pub(crate) block: B,
    pub(crate) run: R,
}

#[cfg(test)]
impl<B, R> Blocks for Stage1<B, R>
where
    B: Fn(&mut Carry, &[u8]) -> Option<u64>,
    R: Fn(&mut Utf8Carry, &[u8]) -> (usize, bool),
{
    const RANGE_UTF8: bool = true;

    #[inline(always)]
    fn block(&self, carry: &mut Carry, bytes: &[u8]) -> Option<u64> {
        (self.block)(carry, bytes)
    }
    #[inline(always)]
    fn run(&self, utf8: &mut Utf8Carry, rest: &[u8]) -> (usize, bool) {
        (self.run)(utf8, rest)
    }
}

/// The long-string run every level shares: whole 64-byte windows of `rest` while
/// `window` says they hold no quote, backslash or control byte (`Some(high)`, `high` not
/// zero when a byte is not ASCII, for `utf8`, the level's UTF-8 step); see [`Blocks::run`].
#[inline(always)]
pub(crate) fn run<C>(
    utf8: &mut Utf8Carry,
    rest: &[u8],
    window: impl Fn(&[u8; 64]) -> Option<(C, u64)>,
    utf8_step: impl Fn(&C, u64, &mut Utf8Carry),
) -> (usize, bool) {
    let mut n = 0;
    let mut high_seen = 0;
    while let Some(chunk) = rest.get(n..n + 64).and_then(|c| <&[u8; 64]>::try_from(c).ok()) {
        let Some((c, high)) = window(chunk) else {
            break;
        };
        utf8_step(&c, high, utf8);
        high_seen |= high;
        super::prefetch::prefetch_ahead(rest, n);
        n += 64;
    }
    (n, high_seen != 0)
}

/// The UTF-8 step of [`run`] for levels that leave UTF-8 to the range check (the cursor
/// notes the range from [`Blocks::run`]'s answer).
#[inline(always)]
pub(crate) fn range_run_utf8<C>(_: &C, _: u64, _: &mut Utf8Carry) {}

/// Where the four hex digits after each escaped `u` (bits of `u`) must stand: in this
/// block (bits i+1..=i+4 for a `u` at i, by two doublings), and in the next one (bit j: a
/// `u` at 60+j or later). The same as a 128-bit `u << 1 | u << 2 | u << 3 | u << 4` split in
/// halves, in fewer instructions.
#[inline(always)]
fn hex_after(u: u64) -> (u64, u64) {
    let two = u | (u << 1);
    let late = u >> 60;
    let late = late | (late >> 1);
    ((two | (two << 2)) << 1, late | (late >> 2))
}

/// The message's last bytes (fewer than 64) padded with spaces, for the levels whose
/// kernels read exactly 64 bytes.
#[inline(always)]
pub(crate) fn padded(rest: &[u8]) -> [u8; 64] {
    let mut padded = [b' '; 64];
    if let Some(head) = padded.get_mut(..rest.len()) {
        head.copy_from_slice(rest);
    }
    padded
}

/// Where a token stream stands: the current block's offset and its tokens not handed out
/// yet. Small and `Copy`, so a hot loop can keep it in registers ([`Cursor::next_at`]).
#[derive(Clone, Copy, Default)]
pub(crate) struct Pos {
    base: usize,
    bits: u64,
}

/// The token stream of one message (see the module docs). `B` is the level's block
/// function (one call per 64 bytes; see [`block`]): it is given the next 64 bytes, or the
/// last 1 to 63, and reads them as if followed by spaces; [`Blocks::RANGE_UTF8`] says
/// whether the cursor keeps up [`Cursor::non_ascii`].
pub(crate) struct Cursor<'a, B> {
    buf: &'a [u8],
    /// The current block and its remaining tokens (for [`Cursor::next`]).
    pos: Pos,
    /// Offset of the next block to compute.
    next_base: usize,
    carry: Carry,
    /// A block failed a check: the stream is over.
    failed: bool,
    /// The blocks that had bytes that are not ASCII: from the start of the first to the end
    /// of the last (empty when there were none).
    non_ascii: core::ops::Range<usize>,
    block: B,
}

impl<'a, B> Cursor<'a, B>
where
    B: Blocks,
{
    /// A cursor at the start of `buf`.
    #[inline(always)]
    pub(crate) fn new(buf: &'a [u8], block: B) -> Self {
        Cursor {
            buf,
            pos: Pos::default(),
            next_base: 0,
            carry: Carry::default(),
            failed: false,
            non_ascii: 0..0,
            block,
        }
    }

    /// The offset of the next token; `None` at the end of the message or after a failed check.
    #[inline(always)]
    pub(crate) fn next(&mut self) -> Option<usize> {
        let mut pos = self.pos;
        let next = self.next_at(&mut pos);
        self.pos = pos;
        next
    }

    /// [`next`](Cursor::next) from a position the caller holds (taken with
    /// [`pos`](Cursor::pos), given back with [`set_pos`](Cursor::set_pos)): in a loop that
    /// reads many tokens the position then stays in registers instead of going through
    /// memory on every token.
    #[inline(always)]
    pub(crate) fn next_at(&mut self, pos: &mut Pos) -> Option<usize> {
        while pos.bits == 0 {
            *pos = self.advance()?;
        }
        let at = pos.base + pos.bits.trailing_zeros() as usize;
        pos.bits &= pos.bits - 1;
        Some(at)
    }

    /// The position [`next`](Cursor::next) reads from.
    #[inline(always)]
    pub(crate) fn pos(&self) -> Pos {
        self.pos
    }

    /// Gives back a position taken with [`pos`](Cursor::pos).
    #[inline(always)]
    pub(crate) fn set_pos(&mut self, pos: Pos) {
        self.pos = pos;
    }

    /// After the last token stage 2 wanted: `true` when the rest of the message has no
    /// token and every block passed its checks.
    #[inline]
    pub(crate) fn finish(&mut self) -> bool {
        if self.pos.bits != 0 {
            return false;
        }
        while let Some(pos) = self.advance() {
            if pos.bits != 0 {
                return false;
            }
        }
        // Levels that check UTF-8 per block: no invalid block, and the message does not
        // end inside a character.
        !self.failed && !self.carry.utf8.invalid && !self.carry.utf8.incomplete
    }

    /// The part of the message UTF-8 validation must look at (after [`finish`]): from the
    /// first block with a byte that is not ASCII to the end of the last such block. Both
    /// ends are character boundaries: the block before the range is all ASCII, and a
    /// character that crosses the range's last block boundary would put a non-ASCII byte
    /// in the next block. Always empty without [`Blocks::RANGE_UTF8`].
    ///
    /// [`finish`]: Cursor::finish
    #[inline(always)]
    pub(crate) fn non_ascii(&self) -> core::ops::Range<usize> {
        self.non_ascii.clone()
    }

    /// Computes the next block: its offset and tokens; `None` at the end of the message or
    /// when a check failed. Left to the compiler, which inlines it where it pays: forced out
    /// of line it made strict mode slower; forced into every `next` it gained little speed
    /// for much more code.
    #[inline]
    fn advance(&mut self) -> Option<Pos> {
        let base = self.next_base;
        if base >= self.buf.len() || self.failed {
            return None;
        }
        self.next_base = base + 64;
        super::prefetch::prefetch_ahead(self.buf, base);
        let end = self.buf.len().min(base + 64);
        let chunk = self.buf.get(base..end).unwrap_or_default();
        match self.block.block(&mut self.carry, chunk) {
            Some(bits) => {
                if B::RANGE_UTF8 {
                    // Without branches: whether a block has non-ASCII bytes varies block to
                    // block in real traffic.
                    let non_ascii = self.carry.utf8.non_ascii;
                    let first = non_ascii & self.non_ascii.is_empty();
                    self.non_ascii.start = if first { base } else { self.non_ascii.start };
                    self.non_ascii.end = if non_ascii { end } else { self.non_ascii.end };
                }
                // A block without tokens or escapes that ends inside a string: a long
                // string (in dense traffic, rare, so the branch is predicted).
                if bits == 0 && self.carry.in_string != 0 && self.carry.no_backslash {
                    self.long_string();
                }
                Some(Pos { base, bits })
            }
            None => {
                self.failed = true;
                None
            }
        }
    }

    /// Inside a string at a block boundary: passes over the plain windows that follow
    /// (see the module docs). Not when an escape or `\u` digits cross the boundary.
    #[inline(never)]
    fn long_string(&mut self) {
        if (self.carry.prev_escaped | self.carry.hex_carry) != 0 {
            return;
        }
        let from = self.next_base;
        let rest = self.buf.get(from..).unwrap_or_default();
        let (n, high) = self.block.run(&mut self.carry.utf8, rest);
        if B::RANGE_UTF8 && high {
            // `from` is a character boundary: the block before it was all ASCII, or the
            // range already starts before it. The window after the run starts with an
            // ASCII byte or holds the rest of a character that crosses into it (which
            // extends the range again).
            if self.non_ascii.is_empty() {
                self.non_ascii.start = from;
            }
            self.non_ascii.end = from + n;
        }
        self.next_base = from + n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::swar;
    use proptest::prelude::*;

    /// All tokens, or `None` when a check failed.
    pub(crate) fn tokens_with(
        buf: &[u8],
        masks: impl Fn(&[u8; 64]) -> TokenMasks,
        escapes: impl Fn(&[u8; 64]) -> EscapeMasks,
        prefix_xor: impl Fn(u64) -> u64,
    ) -> Option<Vec<usize>> {
        let kernels = Stage1 {
            block: |carry: &mut Carry, bytes: &[u8]| {
                let chunk = padded(bytes);
                block(carry, &chunk, &masks, &escapes, &prefix_xor, range_utf8)
            },
            run: |utf8: &mut Utf8Carry, rest: &[u8]| {
                run(utf8, rest, swar::plain_window, range_run_utf8)
            },
        };
        let mut c = Cursor::new(buf, kernels);
        let mut v = Vec::new();
        while let Some(t) = c.next() {
            v.push(t);
        }
        (!c.failed).then_some(v)
    }

    fn tokens(buf: &[u8]) -> Option<Vec<usize>> {
        tokens_with(buf, swar::token_masks, swar::escape_masks, swar::prefix_xor)
    }

    /// The same stream, byte by byte, over the message padded with spaces to whole blocks
    /// (checks that would need bytes past the padding are not made, as in the cursor).
    pub(crate) fn naive(buf: &[u8]) -> Option<Vec<usize>> {
        let mut padded = buf.to_vec();
        padded.resize(buf.len().div_ceil(64) * 64, b' ');
        let mut toks = Vec::new();
        let (mut i, mut in_string, mut prev_scalar) = (0, false, false);
        while let Some(&b) = padded.get(i) {
            if in_string {
                match b {
                    b'"' => {
                        toks.push(i);
                        in_string = false;
                    }
                    b'\\' => {
                        match padded.get(i + 1) {
                            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') | None => {
                            }
                            Some(b'u') => {
                                let digits = padded.get(i + 2..).unwrap_or_default();
                                if !digits.iter().take(4).all(u8::is_ascii_hexdigit) {
                                    return None;
                                }
                            }
                            Some(_) => return None,
                        }
                        i += 2;
                        continue;
                    }
                    0..=0x1F => return None,
                    _ => {}
                }
                i += 1;
                continue;
            }
            let scalar = match b {
                b'"' => {
                    toks.push(i);
                    in_string = true;
                    false
                }
                b'{' | b'}' | b'[' | b']' | b',' | b':' => {
                    toks.push(i);
                    false
                }
                b' ' | b'\t' | b'\n' | b'\r' => false,
                _ => {
                    if !prev_scalar {
                        toks.push(i);
                    }
                    if b == b'\\' {
                        // Outside a string a backslash still escapes the next byte: a quote
                        // or backslash after it is an ordinary scalar byte.
                        if let Some(b'"' | b'\\') = padded.get(i + 1) {
                            i += 2;
                            prev_scalar = true;
                            continue;
                        }
                    }
                    true
                }
            };
            prev_scalar = scalar;
            i += 1;
        }
        Some(toks)
    }

    #[test]
    fn tokens_of_a_message() {
        let s = br#"{"a" : [1, -2.5e3, true], "b\"": "x\\"}"#;
        assert_eq!(
            tokens(s),
            Some(vec![0, 1, 3, 5, 7, 8, 9, 11, 17, 19, 23, 24, 26, 30, 31, 33, 37, 38])
        );
        assert_eq!(tokens(s), naive(s));
    }

    /// The hex-digit positions after escaped `u`s (and the carry into the next block) equal
    /// the plain 128-bit formula, for every one- and two-bit pattern and random words.
    #[test]
    fn hex_positions_equal_the_wide_formula() {
        let wide = |u: u64| {
            let u = u128::from(u);
            let hex = (u << 1) | (u << 2) | (u << 3) | (u << 4);
            (hex as u64, (hex >> 64) as u64)
        };
        let mut words: Vec<u64> = (0..64).map(|i| 1u64 << i).collect();
        for i in 0..64 {
            for j in 0..64 {
                words.push((1u64 << i) | (1u64 << j));
            }
        }
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..10_000 {
            crate::simd::rand::xorshift(&mut seed);
            words.push(seed);
        }
        for u in words {
            assert_eq!(hex_after(u), wide(u), "{u:#x}");
        }
    }

    #[test]
    fn string_checks() {
        for ok in [&br#""\u00e9\n\/""#[..], br#""\\\\""#, b"\"\xc3\xa9\""] {
            assert!(tokens(ok).is_some(), "{}", String::from_utf8_lossy(ok));
        }
        for bad in [&b"\"a\x01\""[..], br#""\x""#, br#""\u12g4""#, br#""\u12"" "#] {
            assert!(tokens(bad).is_none(), "{}", String::from_utf8_lossy(bad));
        }
        // The same checks with the escape cut by a block boundary, at every offset.
        for pad in 55..70 {
            let mut s = vec![b'"'];
            s.extend(std::iter::repeat_n(b'x', pad));
            s.extend_from_slice(br#"\u12G4""#);
            assert!(tokens(&s).is_none(), "{pad}");
            let n = s.len();
            s[n - 3] = b'3';
            assert_eq!(tokens(&s), Some(vec![0, n - 1]), "{pad}");
        }
    }

    proptest! {
        // Miri runs every test of this module, with fewer cases.
        #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 12 } else { 4000 }, failure_persistence: None, ..ProptestConfig::default() })]
        #[test]
        fn cursor_matches_the_byte_walk(
            body in proptest::collection::vec(
                prop::sample::select(&b"{}[],: \t\n\"\"\\\\\\uuu0aFfG/bx-1.e\x01\x7f\xc3\xa9"[..]),
                0..300,
            ),
        ) {
            prop_assert_eq!(tokens(&body), naive(&body));
        }
    }
}
