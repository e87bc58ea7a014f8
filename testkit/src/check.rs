//! The properties the fuzz targets check, as plain functions that panic on a violation.
//!
//! The fuzz targets and the root crate's `tests/regressions.rs` and `tests/differential.rs`
//! call these same functions, so a regression test replays exactly the check that caught
//! its input.
//!
//! | function | property (target) |
//! |---|---|
//! | [`classify`] | any bytes, both modes, batch mode, small depth limits: no panic; envelope equals strict on every JSON text (`classify`) |
//! | [`differential`] | strict mode and the JSON validator agree with the oracle: kind, code, -32600 reason, ids, method, error code; batch elements too (`differential`) |
//! | [`accessors`] | every accessor of a valid message against serde_json and the oracle's member text (`structured`) |
//! | [`respond`] | error responses are JSON (serde_json), echo the id byte for byte, keep code and message (`respond`) |

use rpcscan::response::{standard_message, ErrorResponse, Style};
use rpcscan::{Invalid, Kind, Message, Parser, Reason, Validation};
use rpcscan_oracle as oracle;
use serde_json::value::RawValue;

/// The default, strict parser.
pub const STRICT: Parser = Parser::new();
/// The envelope (fast) parser of docs/spec.md §6.
pub const ENVELOPE: Parser = Parser::new().validation(Validation::Envelope);

/// How many batch elements are looked at (a fuzz input holds at most a few thousand).
const MAX_BATCH_ELEMENTS: usize = 10_000;

/// The verdict of one parse, as a comparable value.
pub type Outcome<'a> = Result<Message<'a>, Invalid<'a>>;

/// `bytes` for an assertion message: lossy text, cut short when long.
pub fn show(bytes: &[u8]) -> String {
    const MAX: usize = 400;
    if bytes.len() <= MAX {
        format!("{:?}", String::from_utf8_lossy(bytes))
    } else {
        format!("{:?}... ({} bytes)", String::from_utf8_lossy(&bytes[..MAX]), bytes.len())
    }
}

fn kind_of(outcome: &Outcome<'_>) -> Kind {
    match outcome {
        Ok(m) => m.kind(),
        Err(_) => Kind::Invalid,
    }
}

/// True when `part` lies inside `whole` (the accessors borrow, never copy).
fn within(whole: &[u8], part: &[u8]) -> bool {
    let start = whole.as_ptr() as usize;
    let at = part.as_ptr() as usize;
    part.is_empty() || (at >= start && at + part.len() <= start + whole.len())
}

/// Invariants of any single verdict on `bytes`, whatever the mode.
fn sane(bytes: &[u8], outcome: &Outcome<'_>, what: &str) {
    match outcome {
        Ok(m) => {
            assert_ne!(m.kind(), Kind::Invalid, "{what}: Ok(Invalid) on {}", show(bytes));
            let views = [m.params(), m.result(), m.error(), m.error_data()];
            for raw in views.into_iter().flatten() {
                assert!(!raw.is_empty(), "{what}: empty span on {}", show(bytes));
                assert_eq!(
                    m.as_bytes().get(raw.offset()..raw.offset() + raw.len()),
                    Some(raw.as_bytes()),
                    "{what}: span offset on {}",
                    show(bytes)
                );
            }
            if let Some(id) = m.id() {
                assert!(within(m.as_bytes(), id.raw()), "{what}: id outside message");
            }
            for s in [m.method(), m.error_message()].into_iter().flatten() {
                assert!(within(m.as_bytes(), s.raw()), "{what}: string outside message");
                // Decoding is total: an error, never a panic.
                let _ = s.decode();
                let _ = s.to_string();
            }
            if let Some(code) = m.error_code() {
                assert!(within(m.as_bytes(), code.raw()));
                let _ = code.as_i64();
            }
        }
        Err(e) => {
            assert_eq!(e.code(), e.reason().code());
            assert_eq!(
                e.offset().is_some(),
                e.reason().is_parse_error(),
                "{what}: offset iff -32700 ({e}) on {}",
                show(bytes)
            );
            if let Some(offset) = e.offset() {
                assert!(
                    offset <= bytes.len(),
                    "{what}: offset {offset} past the end on {}",
                    show(bytes)
                );
            }
            if let Some(id) = e.id() {
                assert!(e.code() == -32600, "{what}: id recovered for -32700");
                assert!(id.is_string() || id.is_integer(), "{what}: recovered {id:?}");
            }
            let _ = e.to_string();
        }
    }
}

/// Property of the `classify` target: any bytes, both modes, batch mode and small depth
/// limits; never a panic; envelope mode gives exactly the strict answer (kind, reason,
/// id, every span) whenever the oracle says the bytes are one JSON text.
pub fn classify(bytes: &[u8]) {
    let json = oracle::validate_json(bytes);
    let strict = STRICT.parse(bytes);
    let envelope = ENVELOPE.parse(bytes);
    sane(bytes, &strict, "strict");
    sane(bytes, &envelope, "envelope");
    assert_eq!(STRICT.classify(bytes), kind_of(&strict));
    assert_eq!(ENVELOPE.classify(bytes), kind_of(&envelope));
    if json {
        assert_eq!(envelope, strict, "envelope vs strict on {}", show(bytes));
    } else {
        assert_eq!(
            strict.map_err(|e| e.code()).err(),
            Some(-32700),
            "strict accepts non-JSON {}",
            show(bytes)
        );
    }

    // Batch mode, both validations.
    let strict_batch = batch(STRICT, bytes);
    let envelope_batch = batch(ENVELOPE, bytes);
    if json {
        assert_eq!(envelope_batch, strict_batch, "batch: envelope vs strict on {}", show(bytes));
    }

    // A small nesting limit picked by the first byte: the same verdict as the default
    // limit when the text is shallow enough, `too_deep` when it is JSON but deeper.
    let limit = usize::from(bytes.first().copied().unwrap_or(0) % 6);
    for parser in [STRICT.max_depth(limit), ENVELOPE.max_depth(limit)] {
        let small = parser.parse(bytes);
        sane(bytes, &small, "small limit");
        if json && oracle::json::depth(bytes) > limit {
            let reason = small.map_err(|e| e.reason()).err();
            assert_eq!(reason, Some(Reason::TooDeep), "limit {limit} on {}", show(bytes));
        } else if json {
            assert_eq!(small, strict, "limit {limit} on {}", show(bytes));
        } else if parser.validation_mode() == Validation::Strict {
            assert_eq!(small.map_err(|e| e.code()).err(), Some(-32700));
        }
    }
}

/// Batch mode verdicts, element by element, with the invariants of [`sane`] checked.
fn batch(parser: Parser, bytes: &[u8]) -> Result<Vec<Outcome<'_>>, Invalid<'_>> {
    let elements = parser.batch(bytes)?;
    let all: Vec<_> = elements.take(MAX_BATCH_ELEMENTS).collect();
    for element in &all {
        sane(bytes, element, "batch element");
    }
    Ok(all)
}

/// Asserts that one rpcscan answer matches the oracle's verdict on the same bytes: kind,
/// code, -32600 reason, raw ids (valid or recovered), decoded method, raw error code, and
/// the `empty` parse reason.
pub fn agree(msg: &[u8], got: &Outcome<'_>, want: &oracle::Verdict) {
    let shown = show(msg);
    match got {
        Ok(m) => {
            assert_eq!(m.kind().as_str(), want.kind.as_str(), "kind of {shown}");
            let id = m.id().map(|id| String::from_utf8_lossy(id.raw()).into_owned());
            assert_eq!(id, want.id, "id of {shown}");
            let method = m.method().and_then(|s| s.decode().ok().map(|c| c.into_owned()));
            assert_eq!(method, want.method, "method of {shown}");
            let code = m.error_code().map(|c| String::from_utf8_lossy(c.raw()).into_owned());
            assert_eq!(code, want.error_code, "error code of {shown}");
            params_name_agrees(m);
        }
        Err(e) => {
            assert_eq!(
                want.kind,
                oracle::Kind::Invalid,
                "{shown}: rpcscan says {e}, oracle {want:?}"
            );
            assert_eq!(Some(e.code()), want.code, "code of {shown}: {e}");
            if e.code() == -32600 {
                assert_eq!(Some(e.reason().as_str()), want.reason, "reason of {shown}");
                let id = e.id().map(|id| String::from_utf8_lossy(id.raw()).into_owned());
                assert_eq!(id, want.id, "recovered id of {shown}");
            } else {
                assert_eq!(
                    e.reason() == Reason::Empty,
                    want.reason == Some("empty"),
                    "empty vs {e} on {shown}"
                );
            }
        }
    }
}

/// `params.name` and `params._meta` as the walk noted them are what a walk of `params` by
/// `Raw::get` finds, and a parser noting them (`Parser::note_params_name`) gives the same
/// message.
pub fn params_name_agrees(m: &Message<'_>) {
    let walked = m.params().map_or(rpcscan::Field::Missing, |p| p.get("name"));
    let walked_meta = m.params().map_or(rpcscan::Field::Missing, |p| p.get("_meta"));
    assert_eq!(m.params_name(), walked, "params.name of {}", show(m.as_bytes()));
    assert_eq!(m.params_meta(), walked_meta, "params._meta of {}", show(m.as_bytes()));
    if cfg!(miri) {
        // Two more parses per message: native runs (and the fuzz targets) cover them.
        return;
    }
    for validation in Validation::ALL {
        let noting = Parser::new().validation(validation).note_params_name(true);
        let Ok(noted) = noting.parse(m.as_bytes()) else {
            panic!("{validation} noting params.name rejects {}", show(m.as_bytes()));
        };
        if validation == Validation::Strict {
            assert_eq!(noted, *m, "noting params.name changes {}", show(m.as_bytes()));
        }
        assert_eq!(noted.params_name(), walked, "noted params.name of {}", show(m.as_bytes()));
        let meta = noted.params_meta();
        assert_eq!(meta, walked_meta, "noted params._meta of {}", show(m.as_bytes()));
    }
}

/// Property of the `differential` target: strict mode, the JSON validator and batch mode
/// agree with the oracle on any bytes, accept and reject alike. Returns the oracle's
/// verdict.
pub fn differential(msg: &[u8]) -> oracle::Verdict {
    let want = oracle::classify(msg);
    let got = STRICT.parse(msg);
    agree(msg, &got, &want);

    let json = oracle::validate_json(msg);
    match rpcscan::json::validate(msg) {
        Ok(()) => assert!(json, "json::validate accepts {}", show(msg)),
        Err(e) => {
            assert!(!json, "json::validate rejects {}: {e:?}", show(msg));
            assert!(e.reason().is_parse_error());
            assert!(e.offset() <= msg.len());
        }
    }

    // Batch mode: each element of a JSON array is classified as a message of its own.
    let batch = STRICT.batch(msg);
    let top = oracle::json::parse(msg).ok().map(RawValue::get);
    match (top, batch) {
        (None, Err(e)) => assert_eq!(e.code(), -32700, "batch on non-JSON {}", show(msg)),
        (None, Ok(_)) => panic!("batch accepts non-JSON {}", show(msg)),
        (Some(value), result) if oracle::json::is_array(value) => {
            let elements: Vec<&RawValue> =
                serde_json::from_str(value).expect("the oracle's array is an array");
            if elements.is_empty() {
                let reason = result.map(|_| ()).map_err(|e| e.reason());
                assert_eq!(reason, Err(Reason::EmptyBatch), "on {}", show(msg));
            } else {
                let got: Vec<_> = result.expect("a non-empty JSON array is a batch").collect();
                assert_eq!(got.len(), elements.len(), "batch length of {}", show(msg));
                for (element, got) in elements.iter().zip(&got) {
                    let text = element.get().as_bytes();
                    if oracle::json::is_array(element.get()) {
                        let reason = got.as_ref().map(|_| ()).map_err(|e| e.reason());
                        assert_eq!(reason, Err(Reason::NotAnObject), "nested batch");
                    } else {
                        agree(text, got, &oracle::classify(text));
                    }
                    if let Ok(m) = got {
                        assert_eq!(m.as_bytes(), text, "batch element bytes");
                    }
                }
            }
        }
        (Some(_), result) => {
            let reason = result.map(|_| ()).map_err(|e| e.reason());
            assert_eq!(reason, Err(Reason::NotAnObject), "batch of {}", show(msg));
        }
    }
    want
}

/// serde_json's decoding of a JSON string's raw content (between the quotes).
fn serde_decode(raw: &[u8]) -> Option<String> {
    let mut quoted = Vec::with_capacity(raw.len() + 2);
    quoted.push(b'"');
    quoted.extend_from_slice(raw);
    quoted.push(b'"');
    serde_json::from_slice::<String>(&quoted).ok()
}

/// `raw` as an integer of type `T` the way the id accessors read it (`-0` is 0).
fn literal_int<T: std::str::FromStr>(raw: &[u8]) -> Option<T> {
    let text = std::str::from_utf8(raw).ok()?;
    let text = if text == "-0" { "0" } else { text };
    text.parse().ok()
}

/// The raw text of the first member named `key` (after unescaping) of a raw object.
fn member<'a>(object: &'a str, key: &str) -> Option<&'a str> {
    oracle::json::members(object)?
        .into_iter()
        .find(|m| m.key().as_deref() == Some(key))
        .map(|m| m.value)
}

/// Property of the `structured` target, on top of [`differential`] and [`classify`]:
/// every accessor of a valid message tells the truth. Ids are the exact bytes of the one
/// `id` member (and `expected_id`, the literal the generator wrote, when it knows it);
/// decoded strings equal serde_json's decoding, and a decode error happens exactly where
/// serde_json refuses (lone surrogates); integers read as Rust parses their literal; raw
/// spans are the oracle's member text.
pub fn accessors(msg: &[u8], expected_id: Option<&[u8]>) {
    let got = STRICT.parse(msg);
    if let Some(want) = expected_id {
        let id = match &got {
            Ok(m) => m.id(),
            Err(e) => e.id(),
        };
        if let Some(id) = id {
            assert_eq!(show(id.raw()), show(want), "id bytes of {}", show(msg));
        }
    }
    let Ok(m) = got else { return };
    let top = oracle::json::parse(msg).expect("a valid message is JSON").get();

    let strings = [
        ("method", m.method()),
        ("error.message", m.error_message()),
        ("id", m.id().and_then(|id| id.as_str())),
    ];
    for (what, s) in strings {
        let Some(s) = s else { continue };
        let serde = serde_decode(s.raw());
        let ours = s.decode().ok().map(|c| c.into_owned());
        assert_eq!(ours, serde, "{what} decoding of {}", show(msg));
        if let Some(text) = &serde {
            assert!(s == text.as_str(), "{what} == its decoding in {}", show(msg));
            assert_eq!(s.has_escapes(), s.raw().contains(&b'\\'));
        }
    }

    if let Some(id) = m.id() {
        let raw = id.raw();
        assert_eq!(Some(std::str::from_utf8(raw).unwrap()), member(top, "id"));
        assert_eq!(id.is_string(), raw.first() == Some(&b'"'), "id type");
        assert_eq!(id.is_null(), raw == b"null", "id null");
        assert_eq!(id.is_integer(), oracle::json::is_integer(&String::from_utf8_lossy(raw)));
        if id.is_integer() {
            assert_eq!(id.as_i64(), literal_int::<i64>(raw), "id as i64");
            assert_eq!(id.as_u64(), literal_int::<u64>(raw), "id as u64");
        } else {
            assert_eq!((id.as_i64(), id.as_u64()), (None, None));
        }
        assert_eq!(id.as_str().is_some(), id.is_string());
    }
    if let Some(code) = m.error_code() {
        assert_eq!(code.as_i64(), literal_int::<i64>(code.raw()), "error code as i64");
    }

    let spans = [
        ("params", m.params(), member(top, "params")),
        ("result", m.result(), member(top, "result")),
        ("error", m.error(), member(top, "error")),
        ("error.data", m.error_data(), member(top, "error").and_then(|e| member(e, "data"))),
    ];
    for (what, ours, oracle_text) in spans {
        let ours = ours.map(|raw| String::from_utf8_lossy(raw.as_bytes()).into_owned());
        // `params` of a response is an unknown member: the view only exposes it on
        // requests and notifications.
        if what == "params" && matches!(m.kind(), Kind::Result | Kind::Error) {
            assert_eq!(ours, None, "params of a response in {}", show(msg));
            continue;
        }
        assert_eq!(ours.as_deref(), oracle_text, "{what} span of {}", show(msg));
    }
    // The error code and message are the error object's members.
    if let Some(error) = member(top, "error") {
        let code = m.error_code().map(|c| String::from_utf8_lossy(c.raw()).into_owned());
        assert_eq!(code.as_deref(), member(error, "code"));
        let message =
            m.error_message().map(|s| format!("\"{}\"", String::from_utf8_lossy(s.raw())));
        assert_eq!(message.as_deref(), member(error, "message"));
    }
}

/// Checks one written error response: it is JSON to serde_json, its members are exactly
/// `jsonrpc`, `id`, `error` with `code`, `message` (and `data`), the id and data are echoed
/// byte for byte, and the message decodes back to the text given.
pub fn response_shape(out: &[u8], id: &[u8], code: i64, message: &str, data: Option<&[u8]>) {
    let shown = show(out);
    serde_json::from_slice::<&RawValue>(out)
        .unwrap_or_else(|e| panic!("response is not JSON ({e}): {shown}"));
    let top = oracle::json::parse(out)
        .unwrap_or_else(|e| panic!("response is not strict JSON ({e:?}): {shown}"))
        .get();
    let members = oracle::json::members(top).expect("an object");
    let keys: Vec<_> = members.iter().map(|m| m.raw_key).collect();
    assert_eq!(keys, [r#""jsonrpc""#, r#""id""#, r#""error""#], "keys of {shown}");
    assert_eq!(members[0].value, r#""2.0""#);
    assert_eq!(members[1].value.as_bytes(), id, "id echo in {shown}");
    let error = oracle::json::members(members[2].value).expect("error is an object");
    let keys: Vec<_> = error.iter().map(|m| m.raw_key).collect();
    let want_keys: &[&str] = match data {
        Some(_) => &[r#""code""#, r#""message""#, r#""data""#],
        None => &[r#""code""#, r#""message""#],
    };
    assert_eq!(keys, want_keys, "error keys of {shown}");
    assert_eq!(error[0].value, code.to_string(), "code in {shown}");
    let decoded: String = serde_json::from_str(error[1].value)
        .unwrap_or_else(|e| panic!("message does not decode ({e}): {shown}"));
    assert_eq!(decoded, message, "message in {shown}");
    if let Some(data) = data {
        assert_eq!(error[2].value.as_bytes(), data, "data echo in {shown}");
    }
    // And rpcscan reads its own answer back as an error response with that id.
    let back = STRICT
        .parse(out)
        .unwrap_or_else(|e| panic!("rpcscan rejects its own response ({e}): {shown}"));
    assert_eq!(back.kind(), Kind::Error);
    assert_eq!(back.id().map(|i| i.raw()), Some(id));
    assert_eq!(back.error_code().and_then(|c| c.as_i64()), Some(code));
}

/// The docs/spec.md §4 bytes of a standard answer, for an exact comparison.
fn spec_answer(id: &[u8], code: i64) -> Vec<u8> {
    let message = standard_message(code).expect("a standard code");
    let mut out = br#"{"jsonrpc": "2.0", "id": "#.to_vec();
    out.extend_from_slice(id);
    out.extend_from_slice(
        format!(r#", "error": {{"code": {code}, "message": "{message}"}}}}"#).as_bytes(),
    );
    out
}

/// Property of the `respond` target: every error response rpcscan builds for `msg` (the
/// answer to an invalid message, a -32601 to a valid request, and a free-form response with
/// `code` and `message` and, when the message has them, `params` as `data`) is JSON, has
/// the docs/spec.md §4 bytes where the rule book fixes them, and echoes the id exactly.
pub fn respond(msg: &[u8], code: i64, message: &str) {
    let mut answers: Vec<Invalid<'_>> = Vec::new();
    let mut valid: Vec<Message<'_>> = Vec::new();
    for parser in [STRICT, ENVELOPE] {
        match parser.parse(msg) {
            Ok(m) => valid.push(m),
            Err(e) => answers.push(e),
        }
        if let Ok(elements) = parser.batch(msg) {
            for element in elements.take(MAX_BATCH_ELEMENTS) {
                match element {
                    Ok(m) => valid.push(m),
                    Err(e) => answers.push(e),
                }
            }
        }
    }
    for e in &answers {
        let id = e.id().map_or(&b"null"[..], |id| id.raw());
        let text = standard_message(e.code()).expect("-32700 and -32600 are standard");
        let response = e.response();
        let spaced = response.to_vec();
        assert_eq!(show(&spaced), show(&spec_answer(id, e.code())), "answer to {}", show(msg));
        response_shape(&spaced, id, e.code(), text, None);
        let compact = response.style(Style::Compact).to_vec();
        response_shape(&compact, id, e.code(), text, None);
        // `write` into a BufMut appends the same bytes as `to_vec`.
        let mut buf = b"x".to_vec();
        response.write(&mut buf);
        assert_eq!(&buf[1..], &spaced[..]);
    }
    // Spans of a message are JSON only if the whole input is (envelope mode skips them).
    let json = oracle::validate_json(msg);
    for m in &valid {
        let Some(id) = m.id() else { continue };
        let not_found = ErrorResponse::standard(-32601).id(id.raw()).to_vec();
        assert_eq!(show(&not_found), show(&spec_answer(id.raw(), -32601)));
        response_shape(&not_found, id.raw(), -32601, "Method not found", None);
        // Free-form: any code, any text; `params` (strict-validated JSON) as `data`.
        let data = m.params().map(|p| p.as_bytes());
        for style in [Style::Spaced, Style::Compact] {
            let mut response = ErrorResponse::new(code, message).id(id.raw()).style(style);
            if let Some(data) = data {
                response = response.data(data);
            }
            let out = response.to_vec();
            if json || data.is_none() {
                response_shape(&out, id.raw(), code, message, data);
            }
        }
    }
    // Without an id: `null`, and the free-form text with every byte of the input.
    let out = ErrorResponse::new(code, message).to_vec();
    response_shape(&out, b"null", code, message, None);
}
