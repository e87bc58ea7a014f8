"""rpcscan.datafusion: rpcscan-datafusion's functions in DataFusion for Python through
DataFusion's FFI, checked against `rpcscan.classify` / `rpcscan.parse` / `rpcscan.read_log`.

The extension has them only when built with the `datafusion` cargo feature (python/ci.sh
builds it for this file). Without the feature or without PyPI `datafusion` the FFI tests
skip, saying why; with RPCSCAN_REQUIRE_DATAFUSION=1 (python/ci.sh's FFI step) they fail
instead, so CI cannot pass by skipping them.
"""

from __future__ import annotations

import json
import os
import pathlib
import sys

import pytest

import rpcscan
from rpcscan import _rpcscan

HAS_FEATURE = hasattr(_rpcscan, "datafusion_functions")
REQUIRED = os.environ.get("RPCSCAN_REQUIRE_DATAFUSION") == "1"
SAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "mcp-traffic.ndjson"
I64 = (-(2**63), 2**63 - 1)
FUNCTIONS = [
    "rpc_kind",
    "rpc_method",
    "rpc_id",
    "rpc_error_code",
    "rpc_tool_name",
    "rpc_invalid_reason",
    "rpc_scan",
    "rpc_text",
]
SCAN_FIELDS = ["kind", "method", "id", "error_code", "tool_name", "invalid_reason"]
STRING_TYPES = ["string", "large_string", "string_view"]
BINARY_TYPES = ["binary", "large_binary", "binary_view"]


def _unavailable(why):
    if REQUIRED:
        pytest.fail(f"RPCSCAN_REQUIRE_DATAFUSION=1 but {why}", pytrace=False)
    pytest.skip(why)


def test_without_the_feature_the_import_error_says_how_to_build_it():
    if HAS_FEATURE:
        pytest.skip("this extension has the datafusion feature (the other tests cover it)")
    sys.modules.pop("rpcscan.datafusion", None)
    with pytest.raises(ImportError, match="--features datafusion"):
        import rpcscan.datafusion  # noqa: F401


@pytest.fixture(scope="module")
def env():
    """(rpcscan.datafusion, datafusion, pyarrow), or a skip (a failure under CI) saying why."""
    if not HAS_FEATURE:
        _unavailable(
            "rpcscan's extension was built without the `datafusion` cargo feature "
            "(maturin develop --features datafusion): DataFusion FFI tests not run"
        )
    try:
        import datafusion
        import pyarrow
    except ImportError as e:
        _unavailable(f"DataFusion for Python is not installed ({e}): DataFusion FFI tests not run")
    import rpcscan.datafusion as rd

    if datafusion.__version__.split(".")[0] != str(rd.DATAFUSION_MAJOR):
        _unavailable(f"datafusion {datafusion.__version__} is not {rd.DATAFUSION_MAJOR}.x")
    return rd, datafusion, pyarrow


# Messages whose verdicts are worth checking one by one; the rule book's table and the
# sample log are added to them below.
MESSAGES = [
    b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    b'{"jsonrpc":"2.0","id":"a\\u0062","method":"n\\u00e9","params":[1,2]}',
    b'{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"get_weather"}}',
    b'{"jsonrpc":"2.0","id":18446744073709551617,"method":"tools/call","params":{"name":"get\\u005fweather","arguments":{}}}',
    b'{"jsonrpc":"2.0","id":-100000000000000000000000000000000000000007,"result":{}}',
    b'{"jsonrpc":"2.0","id":1.5e3,"result":null}',
    b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}',
    b'{"jsonrpc":"2.0","method":"tools/call","params":{"name":"notified"}}',
    b'{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found"}}',
    b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}',
    b'{"jsonrpc":"2.0","id":3,"error":{"code":-184467440737095516160,"message":"too big"}}',
    b'{"jsonrpc":"2.0","id":4,"error":{"code":9223372036854775807,"message":"max"}}',
    b'{"jsonrpc":"2.0","id":null,"method":"ping"}',
    b'{"jsonrpc":"1.0","id":5,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":6,"id":7,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}',
    b'{"jsonrpc":"2.0","id":8,"method":"ping"} trailing',
    b'{"a":}',
    b"",
    b"  ",
    b"[]",
    b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
    b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"ping"}',
    # Not UTF-8: only in a binary column.
    b'{"jsonrpc":"2.0","id":9,"method":"p\xffing"}',
    b'{"jsonrpc":"2.0","id":10,"method":"ping","params":["\xc3\x28"]}',
    b"\xff\xfe\x00",
    b'{"jsonrpc":"2.0","id":"\xe9","method":"ping"}',
]


def all_messages(spec_rows):
    msgs = list(MESSAGES)
    msgs += [bytes.fromhex(row["message_hex"]) for row in spec_rows]
    msgs += [line for line in SAMPLE.read_bytes().split(b"\n") if line.strip()]
    return msgs


def is_utf8(msg):
    try:
        msg.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def expected(msg):
    """What every rpc_* function should give for `msg`, from the package's own API."""
    kind = rpcscan.classify(msg)
    try:
        m = rpcscan.parse(msg)
    except rpcscan.InvalidMessage as e:
        assert kind == "invalid", msg
        return {
            "kind": "invalid",
            "method": None,
            "id": None if e.id_raw is None else e.id_raw.decode("utf-8", "replace"),
            "error_code": None,
            "tool_name": None,
            "invalid_reason": e.reason,
        }
    assert kind == m.kind, msg
    code = m.error_code
    return {
        "kind": m.kind,
        "method": m.method if m.kind in ("request", "notification") else None,
        "id": None if m.id_raw is None else m.id_raw.decode(),
        "error_code": code if code is not None and I64[0] <= code <= I64[1] else None,
        "tool_name": m.tool_name,
        "invalid_reason": None,
    }


def same_text(got, want):
    """A decoded string equals Python's, except that a lone surrogate escape (which Arrow's
    UTF-8 cannot carry) comes back as its raw escaped text (rpcscan-datafusion's choice)."""
    if not isinstance(want, str) or not isinstance(got, str):
        return got == want
    if any(0xD800 <= ord(c) <= 0xDFFF for c in want):
        return json.loads('"' + got + '"') == want
    return got == want


def context(rd, datafusion, table, max_message_size=None):
    ctx = datafusion.SessionContext()
    if max_message_size is None:
        rd.register(ctx)
    else:
        rd.register(ctx, max_message_size=max_message_size)
    ctx.register_record_batches("t", [table.to_batches()])
    return ctx


def message_table(pa, msgs):
    """Every message in a binary column of each binary type, and the UTF-8 ones (NULL for
    the others) in a column of each string type; `n` keeps the order."""
    cols = {"n": pa.array(range(len(msgs)), pa.int64())}
    for t in BINARY_TYPES:
        cols[t] = pa.array(msgs, getattr(pa, t)())
    text = [m.decode() if is_utf8(m) else None for m in msgs]
    for t in STRING_TYPES:
        cols[t] = pa.array(text, getattr(pa, t)())
    return pa.table(cols)


def test_every_registered_function_is_exported(env):
    rd, datafusion, pa = env
    fs = rd.functions()
    assert [f.name for f in fs] == FUNCTIONS
    assert all(hasattr(f, "__datafusion_scalar_udf__") for f in fs)
    assert [f.max_message_size for f in fs] == [16 * 1024 * 1024] * 7 + [None]
    assert [u.name for u in rd.udfs()] == FUNCTIONS
    # The capsule DataFusion for Python reads.
    capsule = fs[0].__datafusion_scalar_udf__()
    assert type(capsule).__name__ == "PyCapsule"
    assert "datafusion_scalar_udf" in repr(capsule)


def test_every_function_on_every_column_type(env, spec_rows):
    rd, datafusion, pa = env
    msgs = all_messages(spec_rows)
    assert sum(not is_utf8(m) for m in msgs) >= 4
    want = [expected(m) for m in msgs]
    ctx = context(rd, datafusion, message_table(pa, msgs))
    for column in BINARY_TYPES + STRING_TYPES:
        calls = ", ".join(f'{f}({column}) AS "{f}"' for f in FUNCTIONS[:-1])
        rows = ctx.sql(f"SELECT n, {calls} FROM t ORDER BY n").to_arrow_table().to_pylist()
        assert len(rows) == len(msgs)
        checked = 0
        for row, msg, w in zip(rows, msgs, want):
            if column in STRING_TYPES and not is_utf8(msg):
                # NULL in, NULL out.
                assert all(row[f] is None for f in FUNCTIONS[:-1]), (column, msg, row)
                continue
            got = {f: row["rpc_" + f] for f in SCAN_FIELDS}
            for f in SCAN_FIELDS:
                assert same_text(got[f], w[f]), (column, f, msg[:200], got, w)
            assert type(got["error_code"]) is type(w["error_code"]), (column, msg)
            # rpc_scan: the same six values from one scan.
            assert row["rpc_scan"] == got, (column, msg[:200])
            checked += 1
        assert checked == (len(msgs) if column in BINARY_TYPES else sum(map(is_utf8, msgs)))


def test_the_values_that_need_care(env):
    """Exact big ids, `"id": null`, codes out of the i64 range, and bytes that are not UTF-8."""
    rd, datafusion, pa = env
    msgs = [MESSAGES[i] for i in (2, 3, 4, 9, 10, 12, 23, 26)]
    ctx = context(rd, datafusion, message_table(pa, msgs))
    rows = ctx.sql(
        "SELECT rpc_kind(binary) AS k, rpc_id(binary) AS id, rpc_error_code(binary) AS code, "
        "rpc_invalid_reason(binary) AS reason, rpc_tool_name(binary) AS tool FROM t ORDER BY n"
    ).to_pylist()
    assert rows == [
        {"k": "request", "id": "9007199254740993", "code": None, "reason": None, "tool": "get_weather"},
        {"k": "request", "id": "18446744073709551617", "code": None, "reason": None, "tool": "get_weather"},
        {"k": "result", "id": "-100000000000000000000000000000000000000007", "code": None, "reason": None, "tool": None},
        {"k": "error", "id": "null", "code": -32700, "reason": None, "tool": None},
        {"k": "error", "id": "3", "code": None, "reason": None, "tool": None},
        {"k": "invalid", "id": None, "code": None, "reason": "bad_id", "tool": None},
        # -32700 family: no id is recovered (docs/spec.md §4).
        {"k": "invalid", "id": None, "code": None, "reason": "invalid_utf8", "tool": None},
        {"k": "invalid", "id": None, "code": None, "reason": "invalid_utf8", "tool": None},
    ]


def test_null_rows_and_scalars(env):
    rd, datafusion, pa = env
    ctx = context(rd, datafusion, pa.table({"n": [0, 1], "binary": pa.array([None, b"{}"], pa.binary())}))
    rows = ctx.sql("SELECT rpc_kind(binary) AS k, rpc_scan(binary) AS s FROM t ORDER BY n").to_pylist()
    assert rows[0] == {"k": None, "s": None}
    assert rows[1]["k"] == "invalid"
    one = ctx.sql(
        """SELECT rpc_kind('{"jsonrpc":"2.0","id":1,"result":1}') AS k,
                  rpc_method(arrow_cast('{"jsonrpc":"2.0","method":"m"}', 'Binary')) AS m,
                  rpc_id(NULL) AS i"""
    ).to_pylist()
    assert one == [{"k": "result", "m": "m", "i": None}]


def test_lone_surrogate_method_is_its_escaped_text(env):
    rd, datafusion, pa = env
    msg = b'{"jsonrpc":"2.0","method":"a\\ud800b","params":{}}'
    assert rpcscan.parse(msg).method == "a\ud800b"
    ctx = context(rd, datafusion, message_table(pa, [msg]))
    assert ctx.sql("SELECT rpc_method(binary) AS m FROM t").to_pylist() == [{"m": "a\\ud800b"}]


def test_max_message_size_matches_scan(env):
    """`too_large` past the limit, as `rpcscan.read_log(..., max_message_size=)` says."""
    rd, datafusion, pa = env
    msgs = [m for m in MESSAGES if m.strip()]
    limit = 45
    assert any(len(m) > limit for m in msgs) and any(len(m) <= limit for m in msgs)
    table = message_table(pa, msgs)
    ctx = context(rd, datafusion, table, max_message_size=limit)
    got = ctx.sql(
        "SELECT rpc_kind(binary) AS kind, rpc_invalid_reason(binary) AS reason, "
        "rpc_id(binary) AS id, rpc_scan(binary)['invalid_reason'] AS scanned FROM t ORDER BY n"
    ).to_pylist()
    scanned = rpcscan.read_log(table.column("binary"), max_message_size=limit).to_pylist()
    assert len(scanned) == len(got) == len(msgs)
    for g, s, msg in zip(got, scanned, msgs):
        assert (g["kind"], g["reason"], g["id"]) == (s["kind"], s["reason"], s["id"]), msg
        assert g["scanned"] == g["reason"]
        if len(msg) > limit:
            assert (g["kind"], g["reason"]) == ("invalid", "too_large"), msg
    with pytest.raises(ValueError):
        rd.functions(max_message_size=0)


def test_rpc_text_and_its_errors_cross_the_ffi(env):
    rd, datafusion, pa = env
    good = [m for m in MESSAGES if is_utf8(m)]
    ctx = context(rd, datafusion, message_table(pa, good))
    for column in BINARY_TYPES + STRING_TYPES:
        rows = ctx.sql(f"SELECT rpc_text({column}) AS x FROM t ORDER BY n").to_pylist()
        assert [r["x"] for r in rows] == [m.decode() for m in good], column
    bad = pa.table(
        {
            "binary": pa.array([b'{"ok":1}', b"ab\xffcd"], pa.binary()),
            "_file": ["logs/a.log", "logs/b.log"],
            "_line": pa.array([1, 3], pa.uint64()),
        }
    )
    ctx = context(rd, datafusion, bad)
    with pytest.raises(Exception, match="not UTF-8"):
        ctx.sql("SELECT rpc_text(binary) FROM t").collect()
    with pytest.raises(Exception, match="line 3 of logs/b.log is not UTF-8"):
        ctx.sql("SELECT rpc_text(binary, _file, _line) FROM t").collect()


def test_dataframe_api_and_group_by(env):
    rd, datafusion, pa = env
    msgs = [line for line in SAMPLE.read_bytes().split(b"\n") if line.strip()]
    ctx = context(rd, datafusion, pa.table({"line": pa.array(msgs, pa.binary())}))
    kind = {u.name: u for u in rd.udfs()}["rpc_kind"]
    df = ctx.table("t").select(kind(datafusion.col("line")).alias("kind"))
    assert [r["kind"] for r in df.to_pylist()] == [rpcscan.classify(m) for m in msgs]
    counts = ctx.sql("SELECT rpc_kind(line) AS kind, count(*) AS n FROM t GROUP BY 1").to_pylist()
    want = {}
    for m in msgs:
        want[rpcscan.classify(m)] = want.get(rpcscan.classify(m), 0) + 1
    assert {r["kind"]: r["n"] for r in counts} == want
    # The README's counts for the sample (`rpcscan stats`).
    assert want == {"request": 93, "notification": 31, "result": 90, "error": 3, "invalid": 4}


def test_a_datafusion_of_another_major_version_is_refused(env, monkeypatch):
    rd, datafusion, pa = env
    monkeypatch.setattr(datafusion, "__version__", "56.0.0")
    f = rd.functions()[0]
    with pytest.raises(RuntimeError, match="datafusion 56.0.0"):
        f.__datafusion_scalar_udf__()
    with pytest.raises(ImportError, match="not 56.0.0"):
        rd.udfs()
