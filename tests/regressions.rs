//! Fuzzing findings, one named test each, replayed through the exact property the fuzz
//! target checks (`rpcscan_testkit`'s `check`, `frames` and `gateway`), plus a replay of every committed seed corpus so the properties also
//! run on stable, in every `cargo test`.
//!
//! Adding a finding: minimize it (`cargo +nightly fuzz tmin <target> <artifact>`), put the
//! bytes inline in a new `#[test]` named after what broke, and say in a comment what the
//! bug was and where it was fixed.

use rpcscan_testkit::{check, frames, gateway};

use std::path::Path;

/// Every property a raw-bytes input is checked against by the byte-level targets.
fn all_properties(bytes: &[u8]) {
    check::classify(bytes);
    check::differential(bytes);
    check::accessors(bytes, None);
    check::respond(bytes, -32000, &String::from_utf8_lossy(bytes));
}

/// The files of `fuzz/corpus/<target>`, sorted by name.
fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    // The package at run time (cargo sets it), not where this test was compiled: a build
    // cache shared by two checkouts can reuse a test binary compiled in the other one.
    let root = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf());
    let dir = root.join("fuzz/corpus").join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect();
    files.sort();
    files
}

#[test]
#[cfg_attr(miri, ignore = "file system access and size: run natively")]
fn byte_level_corpora_replay() {
    for target in ["classify", "differential", "respond"] {
        for (name, bytes) in corpus(target) {
            println!("{target}/{name}");
            all_properties(&bytes);
        }
    }
}

#[test]
#[cfg_attr(miri, ignore = "file system access and size: run natively")]
fn frames_corpus_replays() {
    for (name, bytes) in corpus("frames") {
        println!("frames/{name}");
        frames::frames(&frames::Input::from_bytes(&bytes));
    }
}

#[test]
#[cfg_attr(miri, ignore = "file system access and size: run natively")]
fn gateway_corpus_replays() {
    for (name, bytes) in corpus("gateway") {
        println!("gateway/{name}");
        gateway::gateway(&bytes);
    }
}

// ---- Findings -------------------------------------------------------------------------
