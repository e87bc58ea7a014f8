//! The tests' pseudo-random bytes, shared by every level's tests: a file of the lowest
//! kernel layer, present whatever the target and level (miri, `rpcscan_disable_simd`).

/// One xorshift64 step of `seed` (Marsaglia's 13, 7, 17).
pub(crate) fn xorshift(seed: &mut u64) {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
}
