//! simdjson (C++, through `simdjson/shim.cpp`): a DOM parse per message, strict mode's
//! counterpart, and an On-Demand read of the envelope keys, envelope mode's. Present only
//! when build.rs found simdjson ([`available`]); the programs say so when it is not.

use rpcscan::Kind;

/// Bytes simdjson may read past the end of a message (`SIMDJSON_PADDING`): the callers'
/// buffers must have this many readable bytes after every message they pass.
pub const PADDING: usize = 64;

/// Whether this build has the simdjson contenders.
pub const fn available() -> bool {
    cfg!(rpcscan_simdjson)
}

#[cfg(rpcscan_simdjson)]
mod ffi {
    use std::ffi::{c_char, c_int, c_void};

    pub struct Fns {
        pub dom_new: unsafe extern "C" fn() -> *mut c_void,
        pub dom_free: unsafe extern "C" fn(*mut c_void),
        pub od_new: unsafe extern "C" fn() -> *mut c_void,
        pub od_free: unsafe extern "C" fn(*mut c_void),
        pub select: unsafe extern "C" fn(*const c_char) -> c_int,
        pub od_impl: unsafe extern "C" fn() -> *const c_char,
        pub dom: unsafe extern "C" fn(*mut c_void, *const u8, usize) -> c_int,
        pub ondemand: unsafe extern "C" fn(*mut c_void, *const u8, usize) -> c_int,
    }
    macro_rules! level {
        ($module:ident, $lib:literal, $suffix:literal) => {
            pub mod $module {
                use super::*;
                #[link(name = $lib, kind = "static")]
                extern "C" {
                    #[link_name = concat!("rpcscan_sj_dom_new", $suffix)]
                    fn dom_new() -> *mut c_void;
                    #[link_name = concat!("rpcscan_sj_dom_free", $suffix)]
                    fn dom_free(p: *mut c_void);
                    #[link_name = concat!("rpcscan_sj_od_new", $suffix)]
                    fn od_new() -> *mut c_void;
                    #[link_name = concat!("rpcscan_sj_od_free", $suffix)]
                    fn od_free(p: *mut c_void);
                    #[link_name = concat!("rpcscan_sj_select", $suffix)]
                    fn select(name: *const c_char) -> c_int;
                    #[link_name = concat!("rpcscan_sj_ondemand_impl", $suffix)]
                    fn od_impl() -> *const c_char;
                    #[link_name = concat!("rpcscan_sj_dom", $suffix)]
                    fn dom(p: *mut c_void, buf: *const u8, len: usize) -> c_int;
                    #[link_name = concat!("rpcscan_sj_ondemand", $suffix)]
                    fn ondemand(p: *mut c_void, buf: *const u8, len: usize) -> c_int;
                }
                pub const FNS: Fns =
                    Fns { dom_new, dom_free, od_new, od_free, select, od_impl, dom, ondemand };
            }
        };
    }
    level!(fallback, "rpcscan_sj_fallback", "_fallback");
    level!(haswell, "rpcscan_sj_haswell", "_haswell");
    level!(icelake, "rpcscan_sj_icelake", "_icelake");
}

/// A DOM parser and an On-Demand parser of one level, reused across messages.
pub struct Simdjson {
    #[cfg(rpcscan_simdjson)]
    fns: &'static ffi::Fns,
    #[cfg(rpcscan_simdjson)]
    dom: *mut std::ffi::c_void,
    #[cfg(rpcscan_simdjson)]
    od: *mut std::ffi::c_void,
    /// The simdjson implementations in use: (DOM, On-Demand).
    pub implementations: (String, String),
}

impl Simdjson {
    /// The parsers for rpcscan's kernel level (`scalar`: simdjson's fallback, `avx2`:
    /// haswell, `avx512`: icelake), or `None` without simdjson (or that level).
    pub fn for_level(level: &str) -> Option<Self> {
        #[cfg(rpcscan_simdjson)]
        {
            let (fns, name): (&'static ffi::Fns, &std::ffi::CStr) = match level {
                "scalar" => (&ffi::fallback::FNS, c"fallback"),
                "avx2" => (&ffi::haswell::FNS, c"haswell"),
                "avx512" => (&ffi::icelake::FNS, c"icelake"),
                _ => return None,
            };
            // SAFETY: plain C calls into the shim; the pointers come from its constructors.
            unsafe {
                if (fns.select)(name.as_ptr()) == 0 {
                    return None;
                }
                let od = std::ffi::CStr::from_ptr((fns.od_impl)()).to_string_lossy().into_owned();
                Some(Simdjson {
                    fns,
                    dom: (fns.dom_new)(),
                    od: (fns.od_new)(),
                    implementations: (name.to_string_lossy().into_owned(), od),
                })
            }
        }
        #[cfg(not(rpcscan_simdjson))]
        {
            let _ = level;
            None
        }
    }

    /// DOM parse of `line`, then the envelope read from the tree.
    ///
    /// # Safety
    /// [`PADDING`] bytes after `line` must be readable (the same allocation).
    pub unsafe fn dom(&mut self, line: &[u8]) -> Kind {
        #[cfg(rpcscan_simdjson)]
        {
            // SAFETY: the caller guarantees the padding; the parser is ours.
            kind(unsafe { (self.fns.dom)(self.dom, line.as_ptr(), line.len()) })
        }
        #[cfg(not(rpcscan_simdjson))]
        {
            let _ = line;
            Kind::Invalid
        }
    }

    /// On-Demand read of the top-level members (values not read are skipped).
    ///
    /// # Safety
    /// [`PADDING`] bytes after `line` must be readable (the same allocation).
    pub unsafe fn ondemand(&mut self, line: &[u8]) -> Kind {
        #[cfg(rpcscan_simdjson)]
        {
            // SAFETY: as for `dom`.
            kind(unsafe { (self.fns.ondemand)(self.od, line.as_ptr(), line.len()) })
        }
        #[cfg(not(rpcscan_simdjson))]
        {
            let _ = line;
            Kind::Invalid
        }
    }
}

#[cfg(rpcscan_simdjson)]
impl Drop for Simdjson {
    fn drop(&mut self) {
        // SAFETY: the pointers come from the matching constructors and are freed once.
        unsafe {
            (self.fns.dom_free)(self.dom);
            (self.fns.od_free)(self.od);
        }
    }
}

/// The shim's packed envelope facts to a kind (see shim.cpp for the bits).
#[cfg(rpcscan_simdjson)]
fn kind(facts: std::ffi::c_int) -> Kind {
    if facts < 0 {
        return Kind::Invalid;
    }
    let f = facts as u32;
    let tri = |shift: u32| match (f >> shift) & 3 {
        0 => None,
        1 => Some(false),
        _ => Some(true),
    };
    crate::baselines::kind_of(crate::baselines::Facts {
        version_ok: f & 1 != 0,
        method: tri(1),
        params_ok: tri(3),
        id: match (f >> 5) & 7 {
            0 => None,
            1 => Some(crate::baselines::IdKind::Str),
            2 => Some(crate::baselines::IdKind::Int),
            3 => Some(crate::baselines::IdKind::Null),
            _ => Some(crate::baselines::IdKind::Other),
        },
        result: f & (1 << 8) != 0,
        error_ok: tri(9),
    })
}
