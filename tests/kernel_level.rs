//! The kernel level in use is the one `RPCSCAN_FORCE` asks for. Detection falls back to the
//! best level the CPU has when the forced one is missing (`avx512` on a CPU without
//! AVX-512BW runs AVX2), which would let a per-level CI run pass without running one
//! instruction of that level; this test makes such a run fail instead. It prints the level,
//! so the CI log shows which kernels each run exercised.

#[test]
fn forced_level_is_the_active_level() {
    let active: &str = rpcscan::kernel_level().as_str();
    println!("kernel level: {active}");
    assert!(["scalar", "avx2", "avx512", "neon", "simd128"].contains(&active), "{active}");
    // Unset or empty: nothing forced, the CPU's best level runs.
    if let Some(forced) = std::env::var("RPCSCAN_FORCE").ok().filter(|v| !v.is_empty()) {
        assert_eq!(
            active, forced,
            "RPCSCAN_FORCE={forced} but the kernels in use are {active}: the CPU lacks {forced}"
        );
    }
}
