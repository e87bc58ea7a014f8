//! The rule book's verdict (docs/spec.md §3): what the top-level walk found
//! ([`Facts`]) becomes the fields of a valid message or a -32600 rejection.

use super::envelope::{Facts, Named};
use crate::id::IdKind;
use crate::invalid::Reason;
use crate::kind::Kind;
use crate::limits::Span;

/// Everything the scanner learnt about a valid message, as spans. Kept separate from the
/// bytes so an owned message can pair it with a `Bytes` handle instead of a slice.
///
/// Equality leaves out `params_name` and `params_meta`: they are notes of the walk, not a fact of the message
/// (strict mode takes it on the way, envelope mode does not look, and
/// `Message::params_name` gives the same answer either way), so views of one message
/// compare equal whichever mode made them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fields {
    pub(crate) kind: Kind,
    pub(crate) id: Option<(Span, IdKind)>,
    /// String content (between the quotes) and whether it has escapes.
    pub(crate) method: Option<(Span, bool)>,
    pub(crate) params: Option<Span>,
    /// `params.name` as the walk found it ([`Named::Unknown`]: not looked for).
    pub(crate) params_name: Named,
    /// `params._meta`, likewise.
    pub(crate) params_meta: Named,
    pub(crate) result: Option<Span>,
    pub(crate) error: Option<Span>,
    pub(crate) error_code: Option<Span>,
    pub(crate) error_message: Option<(Span, bool)>,
    pub(crate) error_data: Option<Span>,
}

impl PartialEq for Fields {
    fn eq(&self, other: &Fields) -> bool {
        let Fields {
            kind,
            id,
            method,
            params,
            params_name: _,
            params_meta: _,
            result,
            error,
            error_code,
            error_message,
            error_data,
        } = *self;
        kind == other.kind
            && id == other.id
            && method == other.method
            && params == other.params
            && result == other.result
            && error == other.error
            && error_code == other.error_code
            && error_message == other.error_message
            && error_data == other.error_data
    }
}

impl Eq for Fields {}

/// A -32600 verdict: the reason and the id to answer with.
pub(crate) type Rejection = (Reason, Option<(Span, IdKind)>);

/// docs/spec.md §3, applied in the documented order (see the crate docs, "Reason order").
/// Always inlined into its two callers (`Parser::parse`, `Parser::classify`): a build with
/// one codegen unit (the Python extension's) otherwise kept it a call, which returns the
/// fields through memory (decide took 15 ms of a 500 MB `read_log` apart from `parse`).
#[inline(always)]
pub(crate) fn decide(f: &Facts) -> Result<Fields, Rejection> {
    let id = f.id.and_then(|(span, kind)| Some((span, kind?)));
    let usable = match id {
        Some((_, IdKind::Integer | IdKind::String { .. })) => true,
        Some((_, IdKind::Null)) | None => false,
    };
    let reject = |reason: Reason| -> Result<Fields, Rejection> {
        let recovered = if f.id_count == 1 && usable { id } else { None };
        Err((reason, recovered))
    };
    if f.duplicate {
        return reject(Reason::DuplicateKey);
    }
    if !f.version_ok {
        return reject(Reason::BadVersion);
    }
    let mut fields = Fields {
        kind: Kind::Invalid,
        id,
        method: None,
        params: f.params,
        params_name: f.params_name,
        params_meta: f.params_meta,
        result: f.result,
        error: f.error,
        error_code: f.error_code,
        error_message: f.error_message,
        error_data: f.error_data,
    };
    if let Some(method) = f.method {
        let Some(method) = method else {
            return reject(Reason::BadMethod);
        };
        if f.result.is_some() || f.error.is_some() {
            return reject(Reason::MethodWithResponse);
        }
        if f.params.is_some() && !f.params_ok {
            return reject(Reason::BadParams);
        }
        fields.method = Some(method);
        fields.kind = match f.id {
            None => Kind::Notification,
            Some(_) if usable => Kind::Request,
            Some(_) => return reject(Reason::BadId),
        };
        return Ok(fields);
    }
    // Without `method`, `params` is just an unknown member.
    fields.params = None;
    match (f.result, f.error) {
        (Some(_), Some(_)) => reject(Reason::ResultAndError),
        (None, None) => reject(Reason::NoResultOrError),
        (Some(_), None) => {
            if !usable {
                return reject(Reason::BadId);
            }
            fields.kind = Kind::Result;
            Ok(fields)
        }
        (None, Some(_)) => {
            if !f.error_ok {
                return reject(Reason::BadErrorObject);
            }
            if f.id.is_some() && id.is_none() {
                return reject(Reason::BadId);
            }
            fields.kind = Kind::Error;
            Ok(fields)
        }
    }
}
