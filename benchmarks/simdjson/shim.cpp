// The simdjson contender of the comparison programs: a DOM parse per message (strict mode's
// counterpart) and an On-Demand read of the envelope keys (envelope mode's), each reporting
// the envelope facts the Rust side turns into a kind exactly as the other baselines do.
// Built three times by build.rs (SHIM_SUFFIX, -march): On-Demand's kernels are the
// compile-time "builtin" implementation, so each build holds one level's On-Demand; the DOM
// parser dispatches at run time, and the Rust side picks its implementation.
#include <simdjson.h>
#include <cstdint>
#include <cstring>

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define NAME(x) CAT(x, SHIM_SUFFIX)
#define STR2(x) #x
#define STR(x) STR2(x)

using namespace simdjson;

// Facts bits: 0 version_ok; 1-2 method (0 none, 1 not a string, 2 string);
// 3-4 params (0 none, 1 bad, 2 object/array); 5-7 id (0 none, 1 string, 2 integer,
// 3 null, 4 other); 8 result; 9-10 error (0 none, 1 bad, 2 good). -1: not a JSON object.
static int pack(bool version_ok, int method, int params, int id, bool result, int error) {
  return int(version_ok) | method << 1 | params << 3 | id << 5 | int(result) << 8 | error << 9;
}

static bool is_int_text(std::string_view raw) {
  if (raw.empty()) return false;
  char c = raw[0];
  if (!(c == '-' || (c >= '0' && c <= '9'))) return false;
  return raw.find_first_of(".eE") == std::string_view::npos;
}

extern "C" {

void *NAME(rpcscan_sj_dom_new)() { return new dom::parser(); }
void NAME(rpcscan_sj_dom_free)(void *p) { delete static_cast<dom::parser *>(p); }
void *NAME(rpcscan_sj_od_new)() { return new ondemand::parser(); }
void NAME(rpcscan_sj_od_free)(void *p) { delete static_cast<ondemand::parser *>(p); }

// Names the runtime-dispatched implementation the DOM parser uses ("fallback", "haswell",
// "icelake"); returns 0 when this CPU or build lacks it.
int NAME(rpcscan_sj_select)(const char *name) {
  auto impl = get_available_implementations()[name];
  if (!impl || !impl->supported_by_runtime_system()) return 0;
  get_active_implementation() = impl;
  return 1;
}

// The On-Demand kernels compiled into this build (`builtin_implementation()` would name the
// shared library's own, built for the baseline).
const char *NAME(rpcscan_sj_ondemand_impl)() { return STR(SIMDJSON_BUILTIN_IMPLEMENTATION); }

// `buf` must have SIMDJSON_PADDING readable bytes after `len`.
int NAME(rpcscan_sj_dom)(void *p, const uint8_t *buf, size_t len) {
  auto &parser = *static_cast<dom::parser *>(p);
  dom::element doc;
  if (parser.parse(buf, len, false).get(doc)) return -1;
  dom::object obj;
  if (doc.get_object().get(obj)) return -1;
  bool version_ok = false, result = false;
  int method = 0, params = 0, id = 0, error = 0;
  for (auto field : obj) {
    std::string_view k = field.key;
    dom::element v = field.value;
    if (k == "jsonrpc") {
      std::string_view s;
      version_ok = !v.get_string().get(s) && s == "2.0";
    } else if (k == "method") {
      method = v.is_string() ? 2 : 1;
    } else if (k == "params") {
      params = (v.is_object() || v.is_array()) ? 2 : 1;
    } else if (k == "id") {
      id = v.is_string() ? 1 : (v.is_int64() || v.is_uint64()) ? 2 : v.is_null() ? 3 : 4;
    } else if (k == "result") {
      result = true;
    } else if (k == "error") {
      bool code = false, message = false;
      dom::object e;
      if (!v.get_object().get(e)) {
        for (auto ef : e) {
          if (ef.key == "code") code = ef.value.is_int64();
          else if (ef.key == "message") message = ef.value.is_string();
        }
      }
      error = code && message ? 2 : 1;
    }
  }
  return pack(version_ok, method, params, id, result, error);
}

// On-Demand: the top-level members once, values not read are skipped. `buf` must have
// SIMDJSON_PADDING readable bytes after `len`.
int NAME(rpcscan_sj_ondemand)(void *p, const uint8_t *buf, size_t len) {
  auto &parser = *static_cast<ondemand::parser *>(p);
  ondemand::document doc;
  if (parser.iterate(padded_string_view(buf, len, len + SIMDJSON_PADDING)).get(doc)) return -1;
  ondemand::object obj;
  if (doc.get_object().get(obj)) return -1;
  bool version_ok = false, result = false;
  int method = 0, params = 0, id = 0, error = 0;
  for (auto field : obj) {
    std::string_view k;
    if (field.unescaped_key().get(k)) return -1;
    ondemand::value v;
    if (field.value().get(v)) return -1;
    ondemand::json_type t;
    if (v.type().get(t)) return -1;
    if (k == "jsonrpc") {
      std::string_view s;
      version_ok = t == ondemand::json_type::string && !v.get_string().get(s) && s == "2.0";
    } else if (k == "method") {
      method = t == ondemand::json_type::string ? 2 : 1;
    } else if (k == "params") {
      params = (t == ondemand::json_type::object || t == ondemand::json_type::array) ? 2 : 1;
    } else if (k == "id") {
      if (t == ondemand::json_type::string) id = 1;
      else if (t == ondemand::json_type::null) id = 3;
      else if (t == ondemand::json_type::number) id = is_int_text(v.raw_json_token()) ? 2 : 4;
      else id = 4;
    } else if (k == "result") {
      result = true;
    } else if (k == "error") {
      bool code = false, message = false;
      ondemand::object e;
      if (t == ondemand::json_type::object && !v.get_object().get(e)) {
        for (auto ef : e) {
          std::string_view ek;
          if (ef.unescaped_key().get(ek)) return -1;
          ondemand::value ev;
          if (ef.value().get(ev)) return -1;
          ondemand::json_type et;
          if (ev.type().get(et)) return -1;
          if (ek == "code") code = et == ondemand::json_type::number && is_int_text(ev.raw_json_token());
          else if (ek == "message") message = et == ondemand::json_type::string;
        }
      }
      error = code && message ? 2 : 1;
    }
  }
  return pack(version_ok, method, params, id, result, error);
}
}
