//! Builds the simdjson shim (`simdjson/shim.cpp`) when Debian's `libsimdjson-dev` (or
//! another install with `simdjson.h` on the include path) is there; without it the
//! comparison programs say loudly that they skip the simdjson contenders.
//!
//! The shim is built three times, once per x86_64 level (`-march` of the baseline,
//! haswell, icelake-server): simdjson's On-Demand API runs the kernels of the level it was
//! compiled for, so each build holds one level, and the programs use the one of the level
//! rpcscan runs at.

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=simdjson/shim.cpp");
    println!("cargo:rerun-if-env-changed=RPCSCAN_NO_SIMDJSON");
    println!("cargo::rustc-check-cfg=cfg(rpcscan_simdjson)");
    let x86 = std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("x86_64");
    let header = ["/usr/include/simdjson.h", "/usr/local/include/simdjson.h"]
        .iter()
        .any(|p| Path::new(p).exists());
    if std::env::var_os("RPCSCAN_NO_SIMDJSON").is_some() || !header || !x86 {
        println!(
            "cargo:warning=simdjson skipped: no simdjson.h (Debian: apt-get install \
             libsimdjson-dev), not x86_64, or RPCSCAN_NO_SIMDJSON set; the comparison \
             programs run without the simdjson contenders"
        );
        return;
    }
    for (suffix, march) in
        [("_fallback", None), ("_haswell", Some("haswell")), ("_icelake", Some("icelake-server"))]
    {
        let mut build = cc::Build::new();
        build
            .cpp(true)
            .file("simdjson/shim.cpp")
            .flag("-std=c++17")
            .opt_level(3)
            .define("NDEBUG", None)
            .define("SHIM_SUFFIX", suffix)
            .warnings(false);
        if let Some(march) = march {
            build.flag(format!("-march={march}"));
        }
        build.compile(&format!("rpcscan_sj{suffix}"));
    }
    println!("cargo:rustc-link-lib=simdjson");
    println!("cargo:rustc-cfg=rpcscan_simdjson");
}
