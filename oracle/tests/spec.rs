//! The oracle against the rule book: every row of the shared table of examples
//! (`rpcscan_oracle::table`, docs/spec.md §1–§4 and the JSON-RPC 2.0 specification §7),
//! which the scanner's `tests/spec.rs` checks too.

use rpcscan_oracle::table::{self, Case};
use rpcscan_oracle::{classify, Kind};

/// The oracle's answer for `input` against the row `(verdict, id)`, or a description of the
/// difference. The oracle names only the family of a -32700 reason (`"empty"` or
/// `"parse"`), so an exact parse reason of the table counts as its family.
fn disagreement(input: &[u8], verdict: &str, id: Option<&str>) -> Option<String> {
    let v = classify(input);
    let code = table::code(verdict);
    let (kind, reason) = match code {
        None => (verdict, None),
        Some(-32700) if verdict == "empty" => ("invalid", Some("empty")),
        Some(-32700) => ("invalid", Some("parse")),
        Some(_) => ("invalid", Some(verdict)),
    };
    let agrees =
        v.kind.as_str() == kind && v.reason == reason && v.id.as_deref() == id && v.code == code;
    (!agrees).then(|| {
        format!(
            "{}\n   want {kind} {reason:?} id={id:?} code={code:?}\n   got  {} {:?} id={:?} code={:?}",
            String::from_utf8_lossy(input),
            v.kind.as_str(),
            v.reason,
            v.id,
            v.code
        )
    })
}

fn check(table: &[Case]) {
    let failures: Vec<String> =
        table.iter().filter_map(|&(input, verdict, id)| disagreement(input, verdict, id)).collect();
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn section_1_kinds() {
    check(table::KINDS);
}

#[test]
fn section_2_json_validity() {
    check(table::JSON_VALIDITY);
}

#[test]
fn section_2_generated_examples() {
    let failures: Vec<String> = table::generated()
        .iter()
        .filter_map(|(input, verdict, id)| disagreement(input, verdict, *id))
        .collect();
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn section_3_envelope_rules() {
    check(table::ENVELOPE_RULES);
}

#[test]
fn section_4_invalid_reasons() {
    check(table::INVALID_REASONS);
}

#[test]
fn jsonrpc_specification_section_7() {
    check(table::JSONRPC_SECTION_7);
}

/// Every verdict of the table is a kind or a reason of docs/spec.md §4, and every row is
/// there once.
#[test]
fn the_table_is_well_formed() {
    let mut seen = std::collections::HashSet::new();
    for (section, cases) in table::SECTIONS {
        for &(input, verdict, _) in cases {
            assert!(
                table::code(verdict).is_some() || table::KIND_NAMES[..4].contains(&verdict),
                "{section}: unknown verdict {verdict}"
            );
            assert!(seen.insert(input), "{section}: twice: {}", String::from_utf8_lossy(input));
        }
    }
}

#[test]
fn method_and_error_code_are_exposed() {
    let v = classify(br#"{"jsonrpc":"2.0","method":"tools\/c\u0061ll","id":1}"#);
    assert_eq!(v.method.as_deref(), Some("tools/call"));
    let v = classify(br#"{"jsonrpc":"2.0","method":"\ud800"}"#);
    assert_eq!((v.kind, v.method), (Kind::Notification, None));
    let v = classify(br#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"x"},"id":1}"#);
    assert_eq!((v.error_code.as_deref(), v.method), (Some("-32601"), None));
    let v = classify(br#"{"jsonrpc":"2.0","result":1,"id":1}"#);
    assert_eq!((v.error_code, v.method, v.code, v.reason), (None, None, None, None));
}

#[test]
fn kind_names() {
    let kinds = [Kind::Request, Kind::Notification, Kind::Result, Kind::Error, Kind::Invalid];
    let names: Vec<&str> = kinds.iter().map(Kind::as_str).collect();
    assert_eq!(names, table::KIND_NAMES);
}
