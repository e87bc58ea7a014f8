//! JSONTestSuite (`tests/data/jsontestsuite/test_parsing` in the repository, docs/spec.md
//! §9): the files, and the docs/spec.md §2 stance on every implementation-defined (`i_`)
//! file, written once for the root crate's tests and the oracle's own.

use std::fs;
use std::path::PathBuf;

/// The suite's place inside the repository, relative to a package directory.
const IN_REPOSITORY: &str = "tests/data/jsontestsuite/test_parsing";

/// Where the suite was when this crate was compiled: the repository root is this crate's
/// parent. Used only when nothing tells [`dir`] where the running checkout is.
pub const SUITE: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/jsontestsuite/test_parsing");

/// The suite's folder: `RPCSCAN_JSONTESTSUITE` when set (and not empty); else
/// `tests/data/jsontestsuite/test_parsing` in the nearest ancestor of the running package
/// (cargo sets `CARGO_MANIFEST_DIR` and the working directory for tests) that has one.
/// When none has it, the folder expected beside the running package, so the error names
/// it; [`SUITE`] only when there is no running package to go by. A build cache shared by
/// several checkouts can hold an oracle compiled in another one, whose [`SUITE`] must not
/// stand in for a suite missing from this checkout.
pub fn dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("RPCSCAN_JSONTESTSUITE").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
    let starts = [manifest.clone(), std::env::current_dir().ok()];
    let found = starts
        .into_iter()
        .flatten()
        .flat_map(|start| start.ancestors().map(|a| a.join(IN_REPOSITORY)).collect::<Vec<_>>())
        .find(|candidate| candidate.is_dir());
    match (found, manifest) {
        (Some(dir), _) => dir,
        (None, Some(package)) => package.join(IN_REPOSITORY),
        (None, None) => PathBuf::from(SUITE),
    }
}

/// Every implementation-defined file with its docs/spec.md §2 verdict: `true` = valid JSON.
pub const I_STANCES: &[(&str, bool)] = &[
    // Number magnitude is unlimited: huge exponents and integers are valid.
    ("i_number_double_huge_neg_exp.json", true),
    ("i_number_huge_exp.json", true),
    ("i_number_neg_int_huge_exp.json", true),
    ("i_number_pos_double_huge_exp.json", true),
    ("i_number_real_neg_overflow.json", true),
    ("i_number_real_pos_overflow.json", true),
    ("i_number_real_underflow.json", true),
    ("i_number_too_big_neg_int.json", true),
    ("i_number_too_big_pos_int.json", true),
    ("i_number_very_big_negative_int.json", true),
    // Lone surrogate escapes are grammatical (just not decodable to `str`).
    ("i_object_key_lone_2nd_surrogate.json", true),
    ("i_string_1st_surrogate_but_2nd_missing.json", true),
    ("i_string_1st_valid_surrogate_2nd_invalid.json", true),
    ("i_string_incomplete_surrogate_and_escape_valid.json", true),
    ("i_string_incomplete_surrogate_pair.json", true),
    ("i_string_incomplete_surrogates_escape_valid.json", true),
    ("i_string_invalid_lonely_surrogate.json", true),
    ("i_string_invalid_surrogate.json", true),
    ("i_string_inverted_surrogates_U+1D11E.json", true),
    ("i_string_lone_second_surrogate.json", true),
    // Bytes must be UTF-8: invalid sequences, encoded surrogates (ED A0 80), overlong
    // forms, code points above U+10FFFF, Latin-1 and UTF-16 are all invalid.
    ("i_string_UTF-16LE_with_BOM.json", false),
    ("i_string_UTF-8_invalid_sequence.json", false),
    ("i_string_UTF8_surrogate_U+D800.json", false),
    ("i_string_invalid_utf-8.json", false),
    ("i_string_iso_latin_1.json", false),
    ("i_string_lone_utf8_continuation_byte.json", false),
    ("i_string_not_in_unicode_range.json", false),
    ("i_string_overlong_sequence_2_bytes.json", false),
    ("i_string_overlong_sequence_6_bytes.json", false),
    ("i_string_overlong_sequence_6_bytes_null.json", false),
    ("i_string_truncated-utf-8.json", false),
    ("i_string_utf16BE_no_BOM.json", false),
    ("i_string_utf16LE_no_BOM.json", false),
    // 500 levels is within the depth limit of 1024.
    ("i_structure_500_nested_arrays.json", true),
    // A byte order mark is invalid.
    ("i_structure_UTF-8_BOM_empty_object.json", false),
];

/// One test file: its name and bytes.
pub struct Case {
    /// The file name, e.g. `y_object.json`.
    pub name: String,
    /// The file's bytes.
    pub bytes: Vec<u8>,
}

impl Case {
    /// The docs/spec.md §2 verdict: `Some(valid)`, or `None` for an `i_` file missing from the table.
    pub fn expected(&self) -> Option<bool> {
        match &self.name[..2] {
            "y_" => Some(true),
            "n_" => Some(false),
            _ => I_STANCES.iter().find(|(name, _)| *name == self.name).map(|&(_, valid)| valid),
        }
    }
}

/// Every `.json` file of the suite, sorted by name. Panics when the folder is missing or
/// looks truncated: a silently empty suite would pass every test below.
pub fn cases() -> Vec<Case> {
    let dir = dir();
    let dir = dir.as_path();
    let entries = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("JSONTestSuite not found at {}: {e}", dir.display()));
    let mut cases: Vec<Case> = entries
        .map(|entry| entry.expect("readable directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .map(|path| Case {
            name: path.file_name().unwrap().to_string_lossy().into_owned(),
            bytes: fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
        })
        .collect();
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    let count = |prefix: &str| cases.iter().filter(|c| c.name.starts_with(prefix)).count();
    assert!(
        count("y_") >= 90 && count("n_") >= 180 && count("i_") >= 30,
        "JSONTestSuite at {} looks incomplete: {} y_, {} n_, {} i_",
        dir.display(),
        count("y_"),
        count("n_"),
        count("i_"),
    );
    cases
}
