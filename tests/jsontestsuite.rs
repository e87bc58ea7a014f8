//! JSONTestSuite against the strict validator and the classifier (docs/spec.md §9).
//!
//! Each file of `test_parsing/` is one JSON text (top-level scalars are valid JSON, just not
//! valid messages): every `y_` file is accepted, every `n_` file rejected, and every `i_`
//! file gets the docs/spec.md §2 stance listed in [`I_STANCES`](rpcscan_oracle::suite::I_STANCES) — a new `i_` file fails the test
//! until it is listed. Each accepted file, wrapped as the `params` element of a
//! notification, classifies as a notification in strict and envelope mode. The oracle
//! (`rpcscan-oracle`) must agree on every file. A missing suite folder is a failure, not a
//! skip.

use rpcscan::{Kind, Parser, Validation};
use rpcscan_oracle::suite::{cases as suite, I_STANCES};

/// The file as the single `params` element of a notification.
fn wrap(bytes: &[u8]) -> Vec<u8> {
    [br#"{"jsonrpc":"2.0","method":"m","params":["#, bytes, b"]}"].concat()
}

fn envelope_classify(bytes: &[u8]) -> Kind {
    Parser::new().validation(Validation::Envelope).classify(bytes)
}

fn fail_on(failures: Vec<String>) {
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn y_files_are_accepted() {
    let failures = suite()
        .iter()
        .filter(|c| c.name.starts_with("y_"))
        .filter_map(|c| {
            rpcscan::json::validate(&c.bytes).err().map(|e| format!("{}: rejected: {e:?}", c.name))
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
                "{}: new i_ file, add it to I_STANCES with its docs/spec.md §2 verdict",
                case.name
            )),
            Some(valid) => {
                let got = rpcscan::json::validate(&case.bytes);
                if got.is_ok() != valid {
                    failures.push(format!("{}: expected valid={valid}, got {got:?}", case.name));
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
            failures.push(format!("{}: scanner valid={scanner}, oracle valid={oracle}", case.name));
        }
        if let Some(expected) = case.expected() {
            if oracle != expected {
                failures.push(format!(
                    "{}: oracle valid={oracle}, docs/spec.md says {expected}",
                    case.name
                ));
            }
        }
        let wrapped = wrap(&case.bytes);
        let scanner = rpcscan::classify(&wrapped);
        let oracle = rpcscan_oracle::classify(&wrapped).kind;
        if scanner.as_str() != oracle.as_str() {
            failures
                .push(format!("{}: wrapped, scanner {scanner:?}, oracle {oracle:?}", case.name));
        }
    }
    fail_on(failures);
}
