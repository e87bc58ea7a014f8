//! JSONTestSuite against the strict validator and the classifier (SPEC §9).
//!
//! Each file of `test_parsing/` is one JSON text (top-level scalars are valid JSON, just not
//! valid messages): every `y_` file is accepted, every `n_` file rejected, and every `i_`
//! file gets the SPEC §2 stance listed in [`I_STANCES`] — a new `i_` file fails the test
//! until it is listed. Each accepted file, wrapped as the `params` element of a
//! notification, classifies as a notification in strict and envelope mode. The oracle
//! (`rpcscan-oracle`) must agree on every file. A missing suite folder is a failure, not a
//! skip.

use std::fs;
use std::path::Path;

use rpcscan::{Kind, Parser, Validation};

const SUITE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/jsontestsuite/test_parsing"
);

/// Every implementation-defined file with its SPEC §2 verdict: `true` = valid JSON.
const I_STANCES: &[(&str, bool)] = &[
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
struct Case {
    name: String,
    bytes: Vec<u8>,
}

impl Case {
    /// SPEC §2 verdict: `Some(valid)`, or `None` for an `i_` file missing from the table.
    fn expected(&self) -> Option<bool> {
        match &self.name[..2] {
            "y_" => Some(true),
            "n_" => Some(false),
            _ => I_STANCES
                .iter()
                .find(|(name, _)| *name == self.name)
                .map(|&(_, valid)| valid),
        }
    }
}

/// Every `.json` file of the suite, sorted by name. Panics when the folder is missing or
/// looks truncated: a silently empty suite would pass every test below.
fn suite() -> Vec<Case> {
    let dir = Path::new(SUITE);
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

/// The file as the single `params` element of a notification.
fn wrap(bytes: &[u8]) -> Vec<u8> {
    [br#"{"jsonrpc":"2.0","method":"m","params":["#, bytes, b"]}"].concat()
}

fn envelope_classify(bytes: &[u8]) -> Kind {
    Parser::new()
        .validation(Validation::Envelope)
        .classify(bytes)
}

fn fail_on(failures: Vec<String>) {
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn y_files_are_accepted() {
    let failures = suite()
        .iter()
        .filter(|c| c.name.starts_with("y_"))
        .filter_map(|c| {
            rpcscan::json::validate(&c.bytes)
                .err()
                .map(|e| format!("{}: rejected: {e:?}", c.name))
        })
        .collect();
    fail_on(failures);
}

#[test]
fn n_files_are_rejected() {
    let failures = suite()
        .iter()
        .filter(|c| c.name.starts_with("n_"))
        .filter(|c| rpcscan::json::validate(&c.bytes).is_ok())
        .map(|c| format!("{}: accepted", c.name))
        .collect();
    fail_on(failures);
}

#[test]
fn i_files_get_their_listed_stance() {
    let cases = suite();
    let mut failures = Vec::new();
    for case in cases.iter().filter(|c| c.name.starts_with("i_")) {
        match case.expected() {
            None => failures.push(format!(
                "{}: new i_ file, add it to I_STANCES with its SPEC §2 verdict",
                case.name
            )),
            Some(valid) => {
                let got = rpcscan::json::validate(&case.bytes);
                if got.is_ok() != valid {
                    failures.push(format!(
                        "{}: expected valid={valid}, got {got:?}",
                        case.name
                    ));
                }
            }
        }
    }
    for (name, _) in I_STANCES {
        if !cases.iter().any(|c| c.name == *name) {
            failures.push(format!("{name}: listed in I_STANCES but not in the suite"));
        }
    }
    fail_on(failures);
}

#[test]
fn accepted_files_wrapped_in_params_are_notifications() {
    let mut failures = Vec::new();
    for case in suite() {
        if case.expected() != Some(true) {
            continue;
        }
        let message = wrap(&case.bytes);
        let strict = rpcscan::classify(&message);
        if strict != Kind::Notification {
            failures.push(format!("{}: strict mode says {strict:?}", case.name));
        }
        let envelope = envelope_classify(&message);
        if envelope != Kind::Notification {
            failures.push(format!("{}: envelope mode says {envelope:?}", case.name));
        }
    }
    fail_on(failures);
}

#[test]
fn rejected_files_wrapped_in_params_are_invalid_in_strict_mode() {
    // Only `i_` files: an `n_` file can wrap into valid JSON (the empty file gives
    // `params: []`). Envelope mode does not validate `params`, so it is not asked.
    let failures = suite()
        .iter()
        .filter(|c| c.name.starts_with("i_") && c.expected() == Some(false))
        .filter_map(|c| {
            let kind = rpcscan::classify(&wrap(&c.bytes));
            (kind != Kind::Invalid).then(|| format!("{}: strict mode says {kind:?}", c.name))
        })
        .collect();
    fail_on(failures);
}

#[test]
fn oracle_agrees_on_every_file() {
    let mut failures = Vec::new();
    for case in suite() {
        let scanner = rpcscan::json::validate(&case.bytes).is_ok();
        let oracle = rpcscan_oracle::validate_json(&case.bytes);
        if scanner != oracle {
            failures.push(format!(
                "{}: scanner valid={scanner}, oracle valid={oracle}",
                case.name
            ));
        }
        if let Some(expected) = case.expected() {
            if oracle != expected {
                failures.push(format!(
                    "{}: oracle valid={oracle}, SPEC says {expected}",
                    case.name
                ));
            }
        }
        let wrapped = wrap(&case.bytes);
        let scanner = rpcscan::classify(&wrapped);
        let oracle = rpcscan_oracle::classify(&wrapped).kind;
        if scanner.as_str() != oracle.as_str() {
            failures.push(format!(
                "{}: wrapped, scanner {scanner:?}, oracle {oracle:?}",
                case.name
            ));
        }
    }
    fail_on(failures);
}
