//! Prints the rule book's example table (`rpcscan_oracle::table`: every example of
//! docs/spec.md §1–§4 and JSON-RPC 2.0 §7, plus the generated ones) as JSON, so the Python
//! tests check the package against the same rows as the Rust tests, written once.
//!
//! Each row: `{"section", "message_hex", "verdict", "id", "code"}` — the message as hex
//! (rows include invalid UTF-8), the kind or reason name, the raw id text or `null`, and
//! the reason's JSON-RPC code or `null` for a kind.

use std::io::Write;

use rpcscan_oracle::table;
use serde_json::{json, Value};

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn row(section: &str, msg: &[u8], verdict: &str, id: Option<&str>) -> Value {
    json!({
        "section": section,
        "message_hex": hex(msg),
        "verdict": verdict,
        "id": id,
        "code": table::code(verdict),
    })
}

fn main() {
    let mut rows = Vec::new();
    for (section, cases) in table::SECTIONS {
        for &(msg, verdict, id) in cases {
            rows.push(row(section, msg, verdict, id));
        }
    }
    for (msg, verdict, id) in table::generated() {
        rows.push(row("docs/spec.md §2 (generated)", &msg, verdict, id));
    }
    let text = serde_json::to_string(&rows).unwrap_or_default();
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
}
