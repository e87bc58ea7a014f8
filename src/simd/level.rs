//! The kernel level: detected once and cached in an atomic (no per-call detection).
//! `RPCSCAN_FORCE=scalar|avx2|avx512|neon` picks a level for tests and benchmarks; a level
//! the CPU lacks, or any other value, falls back to the best it has. On aarch64 NEON is
//! baseline, and on wasm32 simd128 is compiled in or not, so detection there is static. Miri and `--cfg rpcscan_disable_simd` always
//! use the portable level.

use core::fmt;
use core::sync::atomic::{AtomicU8, Ordering};

#[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
use super::x86;

/// Which byte-scanning kernels the scanner runs ([`kernel_level`]). Verdicts, reasons and
/// offsets are the same at every level; only the speed differs.
///
/// ```
/// let level = rpcscan::kernel_level();
/// assert!(["scalar", "avx2", "avx512", "neon", "simd128"].contains(&level.as_str()));
/// assert_eq!(level.to_string(), level.as_str());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KernelLevel {
    /// Portable kernels (SWAR, 8 bytes per step): every architecture, miri, and
    /// `--cfg rpcscan_disable_simd`.
    Scalar = 1,
    /// x86_64 AVX2 (with PCLMULQDQ): 32 bytes per step.
    Avx2 = 2,
    /// x86_64 AVX-512BW (with AVX2 and PCLMULQDQ): 64 bytes per step.
    Avx512 = 3,
    /// aarch64 NEON (baseline there): 16 bytes per register, four registers per 64-byte
    /// block.
    Neon = 4,
    /// wasm32 simd128 (a module built with `-C target-feature=+simd128`: WebAssembly has
    /// no run-time detection): 16 bytes per register, four registers per 64-byte block.
    Simd128 = 5,
}

/// The crate's short name for [`KernelLevel`].
pub(crate) use KernelLevel as Level;

impl KernelLevel {
    /// The level's name, as `RPCSCAN_FORCE` spells it: `"scalar"`, `"avx2"`, `"avx512"`,
    /// `"neon"` or `"simd128"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Level::Scalar => "scalar",
            Level::Avx2 => "avx2",
            Level::Avx512 => "avx512",
            Level::Neon => "neon",
            Level::Simd128 => "simd128",
        }
    }
}

impl fmt::Display for KernelLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

static LEVEL: AtomicU8 = AtomicU8::new(0);

/// The cached kernel level.
#[inline(always)]
pub(crate) fn level() -> Level {
    match LEVEL.load(Ordering::Relaxed) {
        1 => Level::Scalar,
        2 => Level::Avx2,
        3 => Level::Avx512,
        4 => Level::Neon,
        5 => Level::Simd128,
        _ => detect(),
    }
}

/// A kernel level the CPU has. Only detection ([`detected`]) and a check of the CPU
/// ([`Detected::check`]) make one, so holding one is the proof that the kernels of the
/// level it names may run (`simd::kernels` builds the level's kernels from it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Detected(Level);

impl Detected {
    /// The level.
    // Read only where there is a vector level to pick.
    #[cfg_attr(
        not(any(
            all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)),
            all(
                target_arch = "aarch64",
                target_feature = "neon",
                not(miri),
                not(rpcscan_disable_simd)
            ),
            all(
                target_arch = "wasm32",
                target_feature = "simd128",
                not(miri),
                not(rpcscan_disable_simd)
            )
        )),
        allow(dead_code)
    )]
    #[inline(always)]
    pub(crate) const fn level(self) -> Level {
        self.0
    }

    /// `level`, when the CPU has it.
    #[cfg(test)]
    pub(crate) fn check(level: Level) -> Option<Self> {
        let best = best_supported();
        let has = match level {
            Level::Scalar => true,
            Level::Avx2 => matches!(best, Level::Avx2 | Level::Avx512),
            Level::Avx512 | Level::Neon | Level::Simd128 => best == level,
        };
        has.then_some(Detected(level))
    }
}

/// The cached kernel level (see [`level`]), as the proof that the CPU has it: [`detect`]
/// stores only levels at or below the best the CPU has, and nothing else stores.
#[inline(always)]
pub(crate) fn detected() -> Detected {
    Detected(level())
}

/// The best level this CPU supports.
pub(crate) fn best_supported() -> Level {
    #[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
    {
        if x86::has_avx512() {
            return Level::Avx512;
        }
        if x86::has_avx2() {
            return Level::Avx2;
        }
    }
    // NEON is part of the aarch64 baseline: no run-time check.
    if cfg!(all(
        target_arch = "aarch64",
        target_feature = "neon",
        not(miri),
        not(rpcscan_disable_simd)
    )) {
        return Level::Neon;
    }
    // simd128 is compiled in or not: WebAssembly has no run-time check.
    if cfg!(all(
        target_arch = "wasm32",
        target_feature = "simd128",
        not(miri),
        not(rpcscan_disable_simd)
    )) {
        return Level::Simd128;
    }
    Level::Scalar
}

#[cold]
fn detect() -> Level {
    let best = best_supported();
    let level = match std::env::var_os("RPCSCAN_FORCE") {
        Some(v) if v == "scalar" => Level::Scalar,
        Some(v) if v == "avx2" && best == Level::Avx512 => Level::Avx2,
        // "avx512", "neon", anything else: the best we have.
        _ => best,
    };
    LEVEL.store(level as u8, Ordering::Relaxed);
    level
}

/// The kernel level in use (see [`KernelLevel`]; `RPCSCAN_FORCE` can lower it).
pub fn kernel_level() -> KernelLevel {
    level()
}
