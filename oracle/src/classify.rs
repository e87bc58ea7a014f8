//! The reference verdict: docs/spec.md §3 and §4 applied, in the scanner's priority order, to the
//! members of a message that [`crate::json`] has already proved to be strict JSON.

use crate::json::{self, Member};
use crate::{Kind, Verdict};

/// The six top-level keys that matter (docs/spec.md §3).
const ENVELOPE_KEYS: [&str; 6] = ["jsonrpc", "id", "method", "params", "result", "error"];

/// JSON-RPC "Parse error".
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC "Invalid Request".
pub const INVALID_REQUEST: i64 = -32600;

/// Strict-mode verdict for one message (docs/spec.md §1–§4). Total: any bytes give a verdict.
pub fn classify(bytes: &[u8]) -> Verdict {
    let value = match json::parse(bytes) {
        Ok(value) => value.get(),
        Err(not_json) => return Verdict::invalid(PARSE_ERROR, not_json.as_str(), None),
    };
    if json::is_array(value) {
        return Verdict::invalid(INVALID_REQUEST, "batch", None);
    }
    if !json::is_object(value) {
        return Verdict::invalid(INVALID_REQUEST, "not_an_object", None);
    }
    let Some(members) = json::members(value) else {
        // Unreachable for text serde_json just accepted as an object; kept total anyway.
        return Verdict::invalid(PARSE_ERROR, "parse", None);
    };
    let envelope = Envelope::collect(&members);
    match envelope.judge() {
        Ok(verdict) => verdict,
        Err(reason) => Verdict::invalid(INVALID_REQUEST, reason, envelope.recovered_id()),
    }
}

/// Every value each envelope key has at the top level, in source order.
struct Envelope<'a> {
    values: [Vec<&'a str>; 6],
}

impl<'a> Envelope<'a> {
    fn collect(members: &[Member<'a>]) -> Self {
        let mut values: [Vec<&'a str>; 6] = Default::default();
        for member in members {
            let Some(key) = member.key() else { continue };
            if let Some(slot) = ENVELOPE_KEYS.iter().position(|k| *k == key) {
                values[slot].push(member.value);
            }
        }
        Envelope { values }
    }

    /// The value of `key` (one of [`ENVELOPE_KEYS`]), if present. Only meaningful once
    /// duplicates have been ruled out.
    fn get(&self, key: &str) -> Option<&'a str> {
        let slot = ENVELOPE_KEYS.iter().position(|k| *k == key)?;
        self.values[slot].first().copied()
    }

    /// docs/spec.md §4: the id to echo in an Invalid Request answer — exactly one `id`
    /// member, and it is a string or an integer literal.
    fn recovered_id(&self) -> Option<String> {
        match self.values[1].as_slice() {
            [id] if is_string_or_integer(id) => Some((*id).to_owned()),
            _ => None,
        }
    }

    /// The rules, in the scanner's priority order; `Err` carries the docs/spec.md §4 reason.
    fn judge(&self) -> Result<Verdict, &'static str> {
        if self.values.iter().any(|v| v.len() > 1) {
            return Err("duplicate_key");
        }
        let version = self.get("jsonrpc");
        if version.and_then(json::decode_string).as_deref() != Some("2.0") {
            return Err("bad_version");
        }
        let id = self.get("id");
        let (result, error) = (self.get("result"), self.get("error"));

        if let Some(method) = self.get("method") {
            if !json::is_string(method) {
                return Err("bad_method");
            }
            if result.is_some() || error.is_some() {
                return Err("method_with_response");
            }
            if let Some(params) = self.get("params") {
                if !json::is_object(params) && !json::is_array(params) {
                    return Err("bad_params");
                }
            }
            let kind = match id {
                None => Kind::Notification,
                Some(id) if is_string_or_integer(id) => Kind::Request,
                Some(_) => return Err("bad_id"),
            };
            return Ok(Verdict {
                kind,
                code: None,
                reason: None,
                id: id.map(str::to_owned),
                method: json::decode_string(method),
                error_code: None,
            });
        }

        match (result, error) {
            (Some(_), Some(_)) => Err("result_and_error"),
            (None, None) => Err("no_result_or_error"),
            (Some(_), None) => match id {
                Some(id) if is_string_or_integer(id) => {
                    Ok(Verdict::response(Kind::Result, Some(id), None))
                }
                _ => Err("bad_id"),
            },
            (None, Some(error)) => {
                let code = error_code(error).ok_or("bad_error_object")?;
                match id {
                    Some(id) if !is_string_or_integer(id) && id != "null" => Err("bad_id"),
                    _ => Ok(Verdict::response(Kind::Error, id, Some(code))),
                }
            }
        }
    }
}

/// The raw `code` of a well-formed error object: an object with exactly one `code` (an
/// integer literal) and exactly one `message` (a string), keys compared after unescaping.
fn error_code(error: &str) -> Option<&str> {
    let members = json::members(error)?;
    let named = |name: &str| -> Vec<&str> {
        members.iter().filter(|m| m.key().as_deref() == Some(name)).map(|m| m.value).collect()
    };
    match (named("code").as_slice(), named("message").as_slice()) {
        ([code], [message]) if json::is_integer(code) && json::is_string(message) => Some(code),
        _ => None,
    }
}

fn is_string_or_integer(raw: &str) -> bool {
    json::is_string(raw) || json::is_integer(raw)
}

impl Verdict {
    /// An invalid verdict with its JSON-RPC code, reason and recovered id.
    fn invalid(code: i64, reason: &'static str, id: Option<String>) -> Self {
        Verdict {
            kind: Kind::Invalid,
            code: Some(code),
            reason: Some(reason),
            id,
            method: None,
            error_code: None,
        }
    }

    /// A `result` or `error` verdict with its raw id (if any) and raw error code.
    fn response(kind: Kind, id: Option<&str>, error_code: Option<&str>) -> Self {
        Verdict {
            kind,
            code: None,
            reason: None,
            id: id.map(str::to_owned),
            method: None,
            error_code: error_code.map(str::to_owned),
        }
    }
}
