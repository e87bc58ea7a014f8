//! The oracle's JSON validator against JSONTestSuite (SPEC §9): every `y_` file accepted,
//! every `n_` file rejected, every `i_` file given the SPEC §2 stance listed below, and
//! every `y_` file wrapped in a notification's `params` classified as a notification.

use std::fs;
use std::path::PathBuf;

use rpcscan_oracle::{classify, validate_json, Kind};

/// Implementation-defined files and the SPEC §2 stance on each: `true` = accepted.
const I_STANCES: &[(&str, bool)] = &[
    // Magnitude is unlimited.
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
    // Lone surrogate escapes are grammatical.
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
    // Bytes must be UTF-8: no invalid sequences, encoded surrogates, overlong forms,
    // code points above U+10FFFF, Latin-1 or UTF-16.
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
    // Depth 500 <= 1024.
    ("i_structure_500_nested_arrays.json", true),
    // A byte order mark is invalid.
    ("i_structure_UTF-8_BOM_empty_object.json", false),
];

fn suite() -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/jsontestsuite/test_parsing"
    ));
    let entries = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("JSONTestSuite missing at {}: {e}", dir.display()));
    let mut files: Vec<(String, Vec<u8>)> = entries
        .map(|entry| {
            let path = entry.expect("readable directory entry").path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let bytes = fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (name, bytes)
        })
        .filter(|(name, _)| name.ends_with(".json"))
        .collect();
    files.sort();
    assert!(
        files.len() > 300,
        "only {} files in {}",
        files.len(),
        dir.display()
    );
    files
}

fn wrap(file: &[u8]) -> Vec<u8> {
    [br#"{"jsonrpc":"2.0","method":"m","params":["#, file, b"]}"].concat()
}

#[test]
fn every_file_gets_its_verdict() {
    let mut failures = Vec::new();
    let (mut y, mut n, mut i) = (0, 0, 0);
    for (name, bytes) in suite() {
        let expected = match name.as_bytes()[0] {
            b'y' => {
                y += 1;
                true
            }
            b'n' => {
                n += 1;
                false
            }
            b'i' => {
                i += 1;
                match I_STANCES.iter().find(|(listed, _)| *listed == name) {
                    Some(&(_, accepted)) => accepted,
                    None => {
                        failures.push(format!("{name}: i_ file not listed in I_STANCES"));
                        continue;
                    }
                }
            }
            _ => continue,
        };
        if validate_json(&bytes) != expected {
            failures.push(format!("{name}: expected accepted={expected}"));
        }
        // Wrapped in a message, a y_ or i_ file keeps its verdict. (Not so for n_ files:
        // an empty or whitespace-only file wraps into a valid `params: []`.)
        if name.starts_with("n_") {
            continue;
        }
        let verdict = classify(&wrap(&bytes));
        let ok = if expected {
            verdict.kind == Kind::Notification
        } else {
            verdict.code == Some(-32700)
        };
        if !ok {
            failures.push(format!("{name}: wrapped gave {verdict:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!((y > 90, n > 180, i), (true, true, I_STANCES.len()));
}
