//! The oracle's JSON validator against JSONTestSuite (docs/spec.md §9): every `y_` file accepted,
//! every `n_` file rejected, every `i_` file given the docs/spec.md §2 stance listed below, and
//! every `y_` file wrapped in a notification's `params` classified as a notification.

use rpcscan_oracle::suite::{cases, I_STANCES};
use rpcscan_oracle::{classify, validate_json, Kind};

fn wrap(file: &[u8]) -> Vec<u8> {
    [br#"{"jsonrpc":"2.0","method":"m","params":["#, file, b"]}"].concat()
}

#[test]
fn every_file_gets_its_verdict() {
    let mut failures = Vec::new();
    let (mut y, mut n, mut i) = (0, 0, 0);
    for case in cases() {
        let (name, bytes) = (case.name, case.bytes);
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
