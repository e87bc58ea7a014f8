"""rpcscan.polars: the `.rpc` expression plugin and the lazy `scan_log`, against the
package's own functions (`classify`, `parse`, the eager reader) and the shared agreement
table (tests/data/agree/). The plugin tests need the extension's `polars` feature: they
skip without it, unless RPCSCAN_REQUIRE_POLARS=1 (python/ci.sh) turns the skip into a
failure."""

from __future__ import annotations

import collections
import json
import os
import pathlib
import subprocess
import sys

import pytest

import rpcscan

pl = pytest.importorskip("polars")
import rpcscan.polars as rpl  # noqa: E402

AGREE = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "agree"
CASES = json.loads((AGREE / "cases.json").read_text())
EXPECTED = json.loads((AGREE / "expected.json").read_text())
KINDS = ["request", "notification", "result", "error", "invalid"]
FUNCTIONS = ["kind", "id", "method", "tool", "error_code", "error_code_text", "reason"]

needs_plugin = pytest.mark.skipif(
    not rpl.PLUGIN and os.environ.get("RPCSCAN_REQUIRE_POLARS") != "1",
    reason="the extension was built without its polars feature",
)


def rpc_columns(column: str = "m", **options) -> list:
    return [getattr(pl.col(column).rpc, f)(**options).alias(f) for f in FUNCTIONS]


def expected(msg: bytes, strict: bool = True) -> dict:
    """One message's values from classify / parse (the package's own per-message API)."""
    kind = rpcscan.classify(msg, strict=strict)
    try:
        m = rpcscan.parse(msg, strict=strict)
    except rpcscan.InvalidMessage as e:
        return dict(
            kind=kind,
            id=None if e.id_raw is None else e.id_raw.decode(),
            method=None,
            tool=None,
            error_code=None,
            error_code_text=None,
            reason=e.reason,
        )
    code = m.error_code
    return dict(
        kind=kind,
        id=None if m.id_raw is None else m.id_raw.decode(),
        method=m.method,
        tool=m.tool_name,
        error_code=code if code is not None and -(2**63) <= code < 2**63 else None,
        error_code_text=None if code is None else str(code),
        reason=None,
    )


@needs_plugin
@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("dtype", ["binary", "string"])
def test_plugin_equals_classify_and_parse_on_the_spec_table(spec_rows, strict, dtype):
    msgs = [bytes.fromhex(row["message_hex"]) for row in spec_rows]
    if dtype == "string":
        # A String column holds UTF-8 only.
        msgs = [m for m in msgs if _utf8(m)]
        series = pl.Series("m", [m.decode() for m in msgs], dtype=pl.String)
    else:
        series = pl.Series("m", msgs, dtype=pl.Binary)
    got = pl.DataFrame([series]).select(rpc_columns(strict=strict)).to_dicts()
    assert len(got) == len(msgs) > 50
    mismatches = []
    for msg, row in zip(msgs, got):
        want = expected(msg, strict)
        # A lone surrogate escape: Polars strings are UTF-8, the raw text is kept (as scan).
        for key in ("method", "tool"):
            if want[key] is not None and not _utf8(want[key].encode("utf-8", "surrogatepass")):
                want[key] = row[key]
        if row != want:
            mismatches.append((msg[:120], row, want))
    assert not mismatches, mismatches[:5]


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


@needs_plugin
def test_plugin_equals_the_eager_reader_of_an_arrow_column(spec_rows):
    """`scan(array)` reads each element as the plugin does: every column equal."""
    msgs = [bytes.fromhex(row["message_hex"]) for row in spec_rows]
    series = pl.Series("m", msgs, dtype=pl.Binary)
    got = pl.DataFrame([series]).select(rpc_columns())
    table = pl.DataFrame(rpcscan.read_log(series))
    assert got.height == table.height == len(msgs)
    pairs = dict(kind="kind", id="id", method="method", tool="tool_name",
                 error_code="error_code", error_code_text="error_code_text", reason="reason")
    for mine, theirs in pairs.items():
        assert got[mine].to_list() == table[theirs].cast(got[mine].dtype).to_list(), mine


@needs_plugin
@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_plugin_agrees_with_the_agreement_table(case):
    """The plain NDJSON logs of tests/data/agree, one line per element: the counts the CLI,
    scan and the SQL functions are held to."""
    if any(k in case for k in ("line_format", "json_field")):
        pytest.skip("log records: the plugin reads bare messages")
    data = (AGREE / case["file"]).read_bytes()
    if not data.strip() or data.lstrip()[:1] not in (b"{", b"["):
        pytest.skip("not NDJSON")
    if b"Content-Length" in data[:64]:
        pytest.skip("framed")
    lines = [line for line in data.split(b"\n") if line.strip()]
    df = pl.DataFrame({"m": pl.Series(lines, dtype=pl.Binary)}).select(rpc_columns())
    want = EXPECTED[case["name"]]
    kinds = collections.Counter(df["kind"].to_list())
    if df.height != want["messages"]:
        pytest.skip("log records (a proxy or gateway log): the plugin reads bare messages")
    assert {k: kinds.get(k, 0) for k in KINDS} == want["kinds"]
    reasons = collections.Counter(r for r in df["reason"].to_list() if r is not None)
    assert dict(reasons) == want["invalid_reasons"]


@needs_plugin
def test_plugin_lazy_streaming_nulls_names_and_big_numbers():
    big = 99999999999999999999
    lines = [
        '{"jsonrpc":"2.0","id":18446744073709551617,"method":"tools/call","params":{"name":"get_weather"}}',
        None,
        f'{{"jsonrpc":"2.0","id":"a","error":{{"code":{big},"message":"x"}}}}',
        '{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"x"}}',
        '{"jsonrpc":"2.0","id":null,"method":"ping"}',
    ]
    lf = pl.LazyFrame({"line": lines}).with_columns(
        kind=pl.col("line").rpc.kind(),
        id=pl.col("line").rpc.id(),
        tool=pl.col("line").rpc.tool(),
        code=pl.col("line").rpc.error_code(),
        code_text=pl.col("line").rpc.error_code_text(),
        reason=pl.col("line").rpc.reason(),
    )
    for engine in ("in-memory", "streaming"):
        df = lf.collect(engine=engine)
        assert df["kind"].to_list() == ["request", None, "error", "error", "invalid"]
        # `"id": null` on a request is invalid (bad_id): no id recovered, as in scan.
        assert df["id"].to_list() == ["18446744073709551617", None, '"a"', "3", None]
        assert df["tool"].to_list() == ["get_weather", None, None, None, None]
        # Beyond int64: null, as scan's error_code column.
        assert df["code"].to_list() == [None, None, None, -32601, None]
        assert df["code_text"].to_list() == [None, None, str(big), "-32601", None]
        assert df["reason"].to_list() == [None, None, None, None, "bad_id"]
    # The name of the input stays (as Polars' own string functions do).
    assert pl.select(pl.lit("[]").rpc.kind()).columns == ["literal"]


@needs_plugin
def test_plugin_many_chunks_in_parallel():
    """More rows than one unit of parallel work: the runs come back in order."""
    n = 100_000
    lines = [
        f'{{"jsonrpc":"2.0","id":{i},"method":"m{i % 7}"}}' if i % 3 else "[]" for i in range(n)
    ]
    df = pl.DataFrame({"line": lines}).select(
        pl.col("line").rpc.id().alias("id"), pl.col("line").rpc.kind().alias("kind")
    )
    assert df["id"].to_list() == [str(i) if i % 3 else None for i in range(n)]
    assert df["kind"].to_list() == ["request" if i % 3 else "invalid" for i in range(n)]


@needs_plugin
def test_plugin_options_and_errors():
    df = pl.DataFrame({"m": ['{"jsonrpc":"2.0","id":1,"method":"ping","extra":1}']})
    # Strict mode rejects an unknown member of the envelope? Whatever it says, envelope
    # mode and strict mode are classify's.
    for strict in (True, False):
        got = df.select(pl.col("m").rpc.kind(strict=strict))["m"][0]
        assert got == rpcscan.classify(df["m"][0], strict=strict)
    got = df.select(pl.col("m").rpc.reason(max_message_size=10))["m"][0]
    assert got == "too_large"
    with pytest.raises(pl.exceptions.ComputeError, match="String or Binary"):
        pl.DataFrame({"m": [1, 2]}).select(pl.col("m").rpc.kind())


def _write_log(path: pathlib.Path, n: int) -> list:
    rows = []
    with path.open("w") as f:
        for i in range(n):
            r = i % 5
            if r == 0:
                line = f'{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"t{i % 3}"}}}}'
            elif r == 1:
                line = f'{{"jsonrpc":"2.0","id":{i - 1},"result":{{}}}}'
            elif r == 2:
                line = f'{{"jsonrpc":"2.0","id":{i},"error":{{"code":-32601,"message":"no"}}}}'
            elif r == 3:
                line = '{"jsonrpc":"2.0","method":"notifications/progress"}'
            else:
                line = '{"jsonrpc":"2.0","id":null,"method":"x"}'
            f.write(line + "\n")
            rows.append(line)
    return rows


def test_scan_log_equals_the_eager_reader(tmp_path):
    path = tmp_path / "log.ndjson"
    _write_log(path, 50_000)
    lazy = rpcscan.scan_log(path)
    assert isinstance(lazy, pl.LazyFrame)
    eager = pl.DataFrame(rpcscan.read_log(str(path)))
    assert lazy.collect_schema() == eager.schema
    for engine in ("in-memory", "streaming"):
        assert lazy.collect(engine=engine).equals(eager)


def test_scan_log_pushes_down_projection_and_kind_filters(tmp_path):
    path = tmp_path / "log.ndjson"
    _write_log(path, 50_000)
    eager = pl.DataFrame(rpcscan.read_log(str(path)))
    query = (
        rpcscan.scan_log(path)
        .filter(pl.col("kind") == "error")
        .select("line", "error_code")
    )
    got = query.collect()
    assert got.equals(eager.filter(pl.col("kind") == "error").select("line", "error_code"))
    scan = rpl.last_scans[-1]
    # Only error rows were built, and only the columns read (kind for the filter).
    assert scan["kinds"] == ["error"]
    assert scan["rows"] == 10_000 == got.height
    assert scan["columns"] == ["line", "kind", "error_code"]

    both = pl.col("kind").is_in(["request", "invalid"]) & (pl.col("method") != "x")
    got = rpcscan.scan_log(path).filter(both).collect()
    assert got.equals(eager.filter(both))
    assert rpl.last_scans[-1]["kinds"] == ["invalid", "request"]
    assert rpl.last_scans[-1]["rows"] == 20_000

    # A filter the reader cannot read keeps every kind, and is still applied.
    other = (pl.col("kind") == "error") | (pl.col("line") < 3)
    got = rpcscan.scan_log(path).filter(other).collect()
    assert got.equals(eager.filter(other))
    assert rpl.last_scans[-1]["kinds"] is None


def test_scan_log_streams_and_stops_early(tmp_path):
    path = tmp_path / "log.ndjson"
    _write_log(path, 400_000)
    got = rpcscan.scan_log(path).head(5).collect()
    assert got["line"].to_list() == [1, 2, 3, 4, 5]
    # Far fewer rows built than the file holds: the reader stopped.
    assert rpl.last_scans[-1]["rows"] < 400_000


def test_scan_log_errors(tmp_path):
    with pytest.raises(ValueError, match="framing"):
        rpcscan.scan_log(tmp_path / "x", framing="nope")
    with pytest.raises(FileNotFoundError):
        rpcscan.scan_log(tmp_path / "missing.ndjson").collect()


def test_import_without_polars():
    """`import rpcscan` and its functions work where Polars cannot be imported;
    `rpcscan.polars` says how to get it."""
    code = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name == "polars" or name.startswith("polars."):
            raise ImportError("blocked")
sys.meta_path.insert(0, Block())
import rpcscan
assert rpcscan.classify(b'[]') == 'invalid'
assert rpcscan.read_log(b'[]\\n').num_rows == 1
try:
    import rpcscan.polars
except ImportError as e:
    assert "rpcscan[polars]" in str(e), e
else:
    raise SystemExit("rpcscan.polars imported without polars")
try:
    rpcscan.scan_log("x")
except ImportError:
    pass
else:
    raise SystemExit("scan_log without polars")
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


@needs_plugin
def test_docstring_examples():
    import doctest

    failures, tries = doctest.testmod(rpl, extraglobs={"rpcscan": rpcscan})
    assert tries > 0 and failures == 0


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_scan_log_equals_the_eager_reader_on_the_agreement_table(case):
    options = {k: case[k] for k in ("line_format", "json_field") if k in case}
    path = AGREE / case["file"]
    eager = pl.DataFrame(rpcscan.read_log(str(path), **options))
    assert eager.height == EXPECTED[case["name"]]["messages"]
    assert rpcscan.scan_log(path, **options).collect().equals(eager)


@pytest.mark.parametrize("framing", ["content-length", "json-seq"])
def test_scan_log_of_a_framed_stream(tmp_path, framing):
    """Framed streams are decoded in order (not merged by blocks): their rows still come in
    batches, and all of them."""
    msgs = [b'{"jsonrpc":"2.0","id":%d,"method":"m"}' % i for i in range(70_000)] + [b"[]"]
    if framing == "content-length":
        data = b"".join(b"Content-Length: %d\r\n\r\n%s" % (len(m), m) for m in msgs)
    else:
        data = b"".join(b"\x1e" + m + b"\n" for m in msgs)
    path = tmp_path / "framed"
    path.write_bytes(data)
    eager = pl.DataFrame(rpcscan.read_log(str(path), framing=framing))
    assert eager.height == len(msgs)
    got = rpcscan.scan_log(path, framing=framing).collect()
    assert got.equals(eager)
    got = rpcscan.scan_log(path, framing=framing).filter(pl.col("kind") == "invalid").collect()
    assert got["reason"].to_list() == ["batch"]


SCAN_LOG_CHILD = r"""
import sys, rpcscan, polars as pl
print("start", flush=True)
try:
    print("rows", rpcscan.scan_log(sys.argv[1]).collect().height, flush=True)
except OSError as e:
    print("oserror", e, flush=True)
"""


def test_scan_log_of_a_file_truncated_mid_read(tmp_path):
    """copytruncate under scan_log: an OSError saying so, or a shorter frame; never a signal
    (positioned reads, as read_log). Each attempt truncates a little later."""
    import time

    line = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}\n'
    data = line * (96 * 1024 * 1024 // len(line))
    path = tmp_path / "truncated.ndjson"
    for attempt in range(6):
        path.write_bytes(data)
        child = subprocess.Popen(
            [sys.executable, "-c", SCAN_LOG_CHILD, str(path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert child.stdout.readline().startswith(b"start")
        time.sleep(0.2 + 0.05 * attempt)
        os.truncate(path, 4096)
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0, (out, err[-300:])
        if out.startswith(b"oserror"):
            assert b"shrank while it was read" in out, out
            break
        assert out.startswith(b"rows"), (out, err[-300:])
