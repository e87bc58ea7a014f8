//! The baseline classifiers of the comparison benchmark: what a gateway writes today with
//! serde_json, simd-json or sonic-rs. Each extracts the envelope and applies docs/spec.md §3
//! as far as its library allows (they differ from the rule book on edge cases such as
//! duplicate keys, which the benchmark reports). Used by the root crate's
//! `benches/classify.rs` and by the `profile` and `ratios` programs.

use rpcscan::Kind;
use serde::Deserialize;
use serde_json::value::RawValue;

/// What every baseline extracts; the kind follows docs/spec.md §3 as far as each library allows.
#[derive(Default)]
struct Env {
    version_ok: bool,
    method: Option<bool>,
    params_ok: Option<bool>,
    id: Option<IdType>,
    result: bool,
    error_ok: Option<bool>,
}

#[derive(PartialEq, Clone, Copy)]
enum IdType {
    Str,
    Int,
    Null,
    Other,
}

impl Env {
    fn kind(&self) -> Kind {
        if !self.version_ok {
            return Kind::Invalid;
        }
        let id_ok = matches!(self.id, Some(IdType::Str | IdType::Int));
        match self.method {
            Some(true)
                if !self.result && self.error_ok.is_none() && self.params_ok != Some(false) =>
            {
                match self.id {
                    None => Kind::Notification,
                    Some(_) if id_ok => Kind::Request,
                    _ => Kind::Invalid,
                }
            }
            Some(_) => Kind::Invalid,
            None => match (self.result, self.error_ok) {
                (true, None) if id_ok => Kind::Result,
                (false, Some(true)) if self.id != Some(IdType::Other) => Kind::Error,
                _ => Kind::Invalid,
            },
        }
    }
}

/// The envelope facts of a baseline outside this module (the simdjson shim).
pub struct Facts {
    /// `jsonrpc` is the string `"2.0"`.
    pub version_ok: bool,
    /// `method` present: whether it is a string.
    pub method: Option<bool>,
    /// `params` present: whether it is an object or array.
    pub params_ok: Option<bool>,
    /// `id` present: its type.
    pub id: Option<IdKind>,
    /// `result` present.
    pub result: bool,
    /// `error` present: whether it has an integer `code` and a string `message`.
    pub error_ok: Option<bool>,
}

/// The type of an `id`.
pub enum IdKind {
    /// A string.
    Str,
    /// An integer.
    Int,
    /// `null`.
    Null,
    /// Anything else.
    Other,
}

/// The kind docs/spec.md §3 gives these facts, as every baseline here decides it.
pub fn kind_of(f: Facts) -> Kind {
    Env {
        version_ok: f.version_ok,
        method: f.method,
        params_ok: f.params_ok,
        id: f.id.map(|id| match id {
            IdKind::Str => IdType::Str,
            IdKind::Int => IdType::Int,
            IdKind::Null => IdType::Null,
            IdKind::Other => IdType::Other,
        }),
        result: f.result,
        error_ok: f.error_ok,
    }
    .kind()
}

fn raw_id_type(raw: &str) -> IdType {
    match raw.as_bytes().first() {
        Some(b'"') => IdType::Str,
        Some(b'-' | b'0'..=b'9') if !raw.contains(['.', 'e', 'E']) => IdType::Int,
        Some(b'n') => IdType::Null,
        _ => IdType::Other,
    }
}

/// serde_json `Value`: the whole message as a tree, then the envelope read from it.
pub fn serde_value(line: &[u8]) -> Kind {
    use serde_json::Value;
    let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(line) else {
        return Kind::Invalid;
    };
    let mut env = Env {
        version_ok: map.get("jsonrpc").and_then(Value::as_str) == Some("2.0"),
        method: map.get("method").map(Value::is_string),
        params_ok: map.get("params").map(|p| p.is_object() || p.is_array()),
        result: map.contains_key("result"),
        ..Env::default()
    };
    env.id = map.get("id").map(|id| match id {
        Value::String(_) => IdType::Str,
        Value::Number(n) if n.is_i64() || n.is_u64() => IdType::Int,
        Value::Null => IdType::Null,
        _ => IdType::Other,
    });
    env.error_ok = map.get("error").map(|e| {
        e.get("code").is_some_and(|c| c.is_i64()) && e.get("message").is_some_and(Value::is_string)
    });
    env.kind()
}

#[derive(Deserialize)]
struct RawEnvelope<'a> {
    #[serde(borrow)]
    jsonrpc: Option<&'a RawValue>,
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<&'a RawValue>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct RawError<'a> {
    #[serde(borrow)]
    code: &'a RawValue,
    #[serde(borrow)]
    message: &'a RawValue,
}

/// serde_json into an envelope struct of `RawValue`s: only the envelope is looked at.
pub fn serde_raw(line: &[u8]) -> Kind {
    let Ok(e) = serde_json::from_slice::<RawEnvelope>(line) else {
        return Kind::Invalid;
    };
    let env = Env {
        version_ok: e.jsonrpc.map(RawValue::get) == Some("\"2.0\""),
        method: e.method.map(|m| m.get().starts_with('"')),
        params_ok: e.params.map(|p| p.get().starts_with(['{', '['])),
        id: e.id.map(|id| raw_id_type(id.get())),
        result: e.result.is_some(),
        error_ok: e.error.map(|err| {
            serde_json::from_str::<RawError>(err.get()).is_ok_and(|r| {
                raw_id_type(r.code.get()) == IdType::Int && r.message.get().starts_with('"')
            })
        }),
    };
    env.kind()
}

/// simd-json borrowed values (copies `line` into `scratch` first: simd-json parses in place).
pub fn simd_json_borrowed(line: &[u8], scratch: &mut Vec<u8>) -> Kind {
    use simd_json::prelude::*;
    use simd_json::BorrowedValue;
    scratch.clear();
    scratch.extend_from_slice(line);
    let Ok(BorrowedValue::Object(map)) = simd_json::to_borrowed_value(scratch) else {
        return Kind::Invalid;
    };
    let env = Env {
        version_ok: map.get("jsonrpc").and_then(|v| v.as_str()) == Some("2.0"),
        method: map.get("method").map(|m| m.is_str()),
        params_ok: map.get("params").map(|p| p.is_object() || p.is_array()),
        id: map.get("id").map(|id| {
            if id.is_str() {
                IdType::Str
            } else if id.is_i64() || id.is_u64() {
                IdType::Int
            } else if id.is_null() {
                IdType::Null
            } else {
                IdType::Other
            }
        }),
        result: map.contains_key("result"),
        error_ok: map.get("error").map(|e| {
            e.get("code").is_some_and(|c| c.is_i64())
                && e.get("message").is_some_and(|m| m.is_str())
        }),
    };
    env.kind()
}

fn sonic_env<'a>(
    iter: impl Iterator<Item = sonic_rs::Result<(std::borrow::Cow<'a, str>, sonic_rs::LazyValue<'a>)>>,
) -> Kind {
    use sonic_rs::JsonValueTrait;
    let mut env = Env::default();
    for member in iter {
        let Ok((key, value)) = member else {
            return Kind::Invalid;
        };
        match &*key {
            "jsonrpc" => env.version_ok = value.as_str() == Some("2.0"),
            "method" => env.method = Some(value.is_str()),
            "params" => env.params_ok = Some(value.is_object() || value.is_array()),
            "id" => env.id = Some(raw_id_type(value.as_raw_str())),
            "result" => env.result = true,
            "error" => {
                let mut code = false;
                let mut message = false;
                for m in sonic_rs::to_object_iter(value.as_raw_str()) {
                    let Ok((k, v)) = m else {
                        return Kind::Invalid;
                    };
                    match &*k {
                        "code" => code = raw_id_type(v.as_raw_str()) == IdType::Int,
                        "message" => message = v.is_str(),
                        _ => {}
                    }
                }
                env.error_ok = Some(code && message);
            }
            _ => {}
        }
    }
    env.kind()
}

/// sonic-rs lazy object iterator over the top-level members, validating the JSON.
pub fn sonic_checked(line: &[u8]) -> Kind {
    let Ok(text) = std::str::from_utf8(line) else {
        return Kind::Invalid;
    };
    sonic_env(sonic_rs::to_object_iter(text))
}

/// sonic-rs lazy object iterator without validation. Only defined on valid JSON: callers
/// must filter their input first.
pub fn sonic_unchecked(line: &[u8]) -> Kind {
    let Ok(text) = std::str::from_utf8(line) else {
        return Kind::Invalid;
    };
    // SAFETY: callers pass only lines the oracle found to be valid JSON (see its doc).
    sonic_env(unsafe { sonic_rs::to_object_iter_unchecked(text) })
}
