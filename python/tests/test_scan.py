"""scan(): the same values as `rpcscan classify --json`, through Arrow, and its integrations."""

from __future__ import annotations

import array
import json
import mmap
import os
import pathlib
import subprocess
import sys
import threading
import time
import warnings

import pytest

import rpcscan

SAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "mcp-traffic.ndjson"

pa = pytest.importorskip("pyarrow")

COLUMNS = [
    "line",
    "offset",
    "kind",
    "method",
    "id",
    "error_code",
    "error_code_text",
    "reason",
    "tool_name",
]


def fits_int64(code) -> bool:
    return isinstance(code, int) and -(2**63) <= code < 2**63


def classify_json(cli, path, *args):
    out = subprocess.run(
        [cli, "classify", "--json", *args, str(path)], check=True, capture_output=True
    ).stdout
    return [json.loads(line) for line in out.splitlines()]


def assert_same(table, objects, messages=None):
    assert table.column_names == COLUMNS
    rows = table.to_pylist()
    assert len(rows) == len(objects)
    for i, (row, obj) in enumerate(zip(rows, objects)):
        for key in ("line", "offset", "kind", "method", "reason"):
            assert row[key] == obj.get(key), (i, key, row, obj)
        # The CLI prints the code verbatim: `error_code_text` holds that text exactly, and
        # `error_code` the same value where it fits an int64.
        code = obj.get("error_code")
        text = row["error_code_text"]
        assert (None if text is None else json.loads(text)) == code, (i, row, obj)
        assert row["error_code"] == (code if fits_int64(code) else None), (i, row, obj)
        # The id column is the id's raw text; the CLI prints the same text as JSON.
        want = obj["id"]
        got = None if row["id"] is None else json.loads(row["id"])
        assert (got, type(got)) == (want, type(want)), (i, row, obj)
        if messages is not None and row["kind"] != "invalid":
            assert row["tool_name"] == rpcscan.parse(messages[i]).tool_name


def sample_messages():
    return [line for line in SAMPLE.read_bytes().split(b"\n") if line.strip()]


def test_scan_path_equals_classify_json(cli):
    table = rpcscan.read_log(SAMPLE)
    assert isinstance(table, pa.Table)
    assert_same(table, classify_json(cli, SAMPLE), sample_messages())
    assert table.column("tool_name").null_count < table.num_rows
    assert_same(rpcscan.read_log(str(SAMPLE), mode="envelope"), classify_json(cli, SAMPLE, "--mode", "envelope"))


def test_scan_bytes_and_iterables_equal_the_path(cli):
    data = SAMPLE.read_bytes()
    want = rpcscan.read_log(SAMPLE)
    assert rpcscan.read_log(data).equals(want)
    assert rpcscan.read_log(bytearray(data)).equals(want)
    assert rpcscan.read_log(memoryview(data)).equals(want)
    with open(SAMPLE, "rb") as f:
        assert rpcscan.read_log(f).equals(want)
    chunks = [data[i : i + 1000] for i in range(0, len(data), 1000)]
    assert rpcscan.read_log(iter(chunks)).equals(want)


def test_scan_large_generated_file(cli, tmp_path):
    """Repeated sample traffic, $RPCSCAN_PY_LARGE_MB (default 50) MB: many blocks on the
    rayon pool, rows in input order."""
    data = SAMPLE.read_bytes()
    path = tmp_path / "big.ndjson"
    size = int(float(os.environ.get("RPCSCAN_PY_LARGE_MB", "50")) * (1 << 20))
    with open(path, "wb") as f:
        for _ in range(max(1, size // len(data))):
            f.write(data)
    table = rpcscan.read_log(path)
    assert_same(table, classify_json(cli, path))
    assert rpcscan.read_log(path.read_bytes()).equals(table)


def test_other_framings(cli, tmp_path):
    msgs = sample_messages()[:20]
    body = b"".join(b"Content-Length: %d\r\n\r\n%s" % (len(m), m) for m in msgs)
    path = tmp_path / "lsp.log"
    path.write_bytes(body)
    table = rpcscan.read_log(path, framing="content-length")
    assert_same(table, classify_json(cli, path, "--framing", "content-length"))
    assert table.column("line").null_count == table.num_rows
    assert rpcscan.read_log(body).equals(table)  # sniffed


def test_oversized_and_blank_lines(cli, tmp_path):
    path = tmp_path / "x.ndjson"
    path.write_bytes(b'\n\n{"jsonrpc":"2.0","id":1,"method":"m"}\n' + b"x" * 100 + b"\n[]\n")
    table = rpcscan.read_log(path, max_message_size=64)
    assert_same(table, classify_json(cli, path, "--max-message-size", "64"))
    assert table.column("reason").to_pylist() == [None, "too_large", "batch"]


def test_errors():
    with pytest.raises(FileNotFoundError) as info:
        rpcscan.read_log("/nonexistent/traffic.ndjson")
    assert info.value.filename == "/nonexistent/traffic.ndjson"
    with pytest.raises(IsADirectoryError):
        rpcscan.read_log(SAMPLE.parent)
    with pytest.raises(ValueError):
        rpcscan.read_log(b"{}", framing="xml")
    with pytest.raises(ValueError):
        rpcscan.read_log(b"{}", mode="lenient")
    with pytest.raises(TypeError):
        rpcscan.read_log(None)
    assert rpcscan.read_log(b"").num_rows == 0


def test_capsule_without_pyarrow_wrapper():
    from rpcscan import _rpcscan

    raw = _rpcscan.scan_bytes(SAMPLE.read_bytes())
    assert len(raw) == raw.num_rows and raw.column_names == COLUMNS
    capsule = raw.__arrow_c_stream__()
    assert type(capsule).__name__ == "PyCapsule"
    # Exported twice, read twice.
    assert pa.table(raw).equals(pa.table(raw))
    assert pa.RecordBatchReader.from_stream(raw).read_all().num_rows == raw.num_rows


def test_pandas_round_trip():
    pd = pytest.importorskip("pandas")
    df = rpcscan.read_log(SAMPLE).to_pandas()
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == COLUMNS
    assert df["kind"].value_counts().sum() == len(sample_messages())


def test_polars_round_trip():
    pl = pytest.importorskip("polars")
    from rpcscan import _rpcscan

    df = pl.from_arrow(rpcscan.read_log(SAMPLE))
    assert df.columns == COLUMNS
    assert df.height == len(sample_messages())
    # Without pyarrow in between: the PyCapsule interface directly.
    direct = pl.DataFrame(_rpcscan.scan_path(str(SAMPLE)))
    assert direct.equals(df)
    counts = dict(df.group_by("kind").len().iter_rows())
    assert sum(counts.values()) == df.height


def test_duckdb_round_trip():
    duckdb = pytest.importorskip("duckdb")
    traffic = rpcscan.read_log(SAMPLE)  # noqa: F841 (read by name in the SQL)
    rows = duckdb.sql("SELECT kind, count(*) FROM traffic GROUP BY 1 ORDER BY 1").fetchall()
    want = {}
    for kind in traffic.column("kind").to_pylist():
        want[kind] = want.get(kind, 0) + 1
    assert dict(rows) == want


def test_threads_scan_concurrently(tmp_path):
    """Two threads scanning at once both finish (the GIL is released); timings are printed,
    not asserted."""
    data = SAMPLE.read_bytes()
    path = tmp_path / "t.ndjson"
    path.write_bytes(data * max(1, (4 << 20) // len(data)))
    start = time.perf_counter()
    want = rpcscan.read_log(path)
    one = time.perf_counter() - start
    results = []
    threads = [threading.Thread(target=lambda: results.append(rpcscan.read_log(path))) for _ in range(2)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    two = time.perf_counter() - start
    print(f"one scan {one:.3f}s, two concurrent scans {two:.3f}s")
    assert len(results) == 2 and all(r.equals(want) for r in results)


def arrow_layouts(values):
    """The same messages in every Arrow layout scan() takes."""
    layouts = [pa.string(), pa.large_string(), pa.binary(), pa.large_binary()]
    if hasattr(pa, "string_view"):
        layouts += [pa.string_view(), pa.binary_view()]
    for layout in layouts:
        data = values if layout in (pa.binary(), pa.large_binary()) or str(layout) == "binary_view" else [
            v.decode() for v in values
        ]
        yield str(layout), pa.array(data, type=layout)


def test_scan_arrow_layouts_equal_ndjson():
    messages = sample_messages()
    want = rpcscan.read_log(b"\n".join(messages))
    for name, array in arrow_layouts(messages):
        assert rpcscan.read_log(array).equals(want), name
        # A chunked array: line numbers and offsets run on across chunks.
        chunked = pa.chunked_array([array.slice(0, 50), array.slice(50)])
        assert rpcscan.read_log(chunked).equals(want), name
    # A one-column table, and nulls (no row, but they still count as elements).
    assert rpcscan.read_log(pa.table({"line": messages})).equals(want)
    with_nulls = rpcscan.read_log(pa.array([None, messages[0]]))
    assert with_nulls.column("line").to_pylist() == [2]
    assert with_nulls.column("kind").to_pylist() == [rpcscan.classify(messages[0])]


def test_scan_arrow_from_polars_and_duckdb():
    messages = [m.decode() for m in sample_messages()]
    want = rpcscan.read_log("\n".join(messages).encode())
    pl = pytest.importorskip("polars")
    series = pl.Series("line", messages)
    assert rpcscan.read_log(series).equals(want)
    # A Polars expression over a column of lines: map_batches hands over the Arrow array.
    df = pl.DataFrame({"line": messages})
    kinds = df.select(
        pl.col("line").map_batches(
            lambda s: pl.Series(rpcscan.read_log(s).column("kind").to_pylist()),
            return_dtype=pl.String,
        )
    )
    assert kinds.to_series().to_list() == want.column("kind").to_pylist()
    duckdb = pytest.importorskip("duckdb")
    lines = pa.table({"line": messages})  # noqa: F841 (read by name in the SQL)
    arrow = duckdb.sql("SELECT line FROM lines").arrow()
    assert rpcscan.read_log(arrow).equals(want)


def test_scan_arrow_bad_layouts():
    with pytest.raises(TypeError):
        rpcscan.read_log(pa.array([1, 2, 3]))
    with pytest.raises(TypeError):
        rpcscan.read_log(pa.table({"a": ["x"], "b": ["y"]}))
    with pytest.raises(ValueError):
        rpcscan.read_log(pa.array(["{}"]), framing="sse")


def test_without_pyarrow():
    """pyarrow not importable: scan() returns an rpcscan.Table, read through its capsule."""
    code = (
        "import sys; sys.modules['pyarrow'] = None\n"
        "import rpcscan\n"
        "t = rpcscan.read_log(sys.argv[1])\n"
        "assert type(t).__name__ == 'Table', type(t)\n"
        "import polars\n"
        "print(polars.DataFrame(t).height)\n"
    )
    pytest.importorskip("polars")
    out = subprocess.run(
        [sys.executable, "-c", code, str(SAMPLE)], check=True, capture_output=True, text=True
    ).stdout
    assert int(out) == len(sample_messages())


@pytest.mark.parametrize("wrapper", ["prefix", "payload", "proxy-log"])
def test_scan_log_lines_equal_classify_json(cli, pairlog, wrapper):
    """Messages inside log lines (line_format, json_field, proxy logs recognised): the rows
    of `rpcscan classify --json` with the same options."""
    path, args, _ = pairlog(3, wrapper)
    options = {}
    it = iter(args)
    for flag in it:
        options[flag.lstrip("-").replace("-", "_")] = next(it)
    table = rpcscan.read_log(path, **options)
    assert_same(table, classify_json(cli, path, *args))
    assert table.num_rows == 24000
    assert rpcscan.read_log(path.read_bytes(), **options).equals(table)


def test_tool_name_column_matches_parse():
    """The tool_name column: `params.name` of `tools/call` requests only, exactly as
    `parse(...).tool_name` (escaped method and name, duplicate or non-string names)."""
    messages = [
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}',
        b'{"jsonrpc":"2.0","id":2,"method":"t\\u006fols/call","params":{"name":"e\\u0063ho"}}',
        b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a","name":"b"}}',
        b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":7}}',
        b'{"jsonrpc":"2.0","method":"tools/call","params":{"name":"note"}}',
        b'{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"p"}}',
        b'{"jsonrpc":"2.0","id":6,"method":"tools/call","params":[1]}',
        b'{"jsonrpc":"2.0","id":7,"result":{"name":"x","resultType":"complete"}}',
    ]
    table = rpcscan.read_log(b"\n".join(messages))
    assert table.column("tool_name").to_pylist() == [rpcscan.parse(m).tool_name for m in messages]
    assert table.column("tool_name").to_pylist()[:2] == ["echo", "echo"]
    assert table.column("kind").type == pa.dictionary(pa.int8(), pa.string())


TRUNCATE_CHILD = r"""
import sys, rpcscan
path, mmap = sys.argv[1], sys.argv[2] == "1"
print("start", flush=True)
try:
    t = rpcscan.read_log(path, mmap=mmap)
    print("rows", t.num_rows, flush=True)
except OSError as e:
    print("oserror", e, flush=True)
"""


def test_a_file_truncated_mid_scan_never_kills_the_interpreter(tmp_path):
    """logrotate's copytruncate under a scan: positioned reads (the default) end in an
    OSError or a shorter table, never a signal; each attempt truncates a little later, until
    one lands mid-scan. With mmap=True the documented risk is SIGBUS (-7), or no harm."""
    line = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}\n'
    data = line * (160 * 1024 * 1024 // len(line))
    path = tmp_path / "truncated.ndjson"
    seen = []
    for mmap in (False, True):
        hit = False
        for attempt in range(12):
            path.write_bytes(data)
            child = subprocess.Popen(
                [sys.executable, "-c", TRUNCATE_CHILD, str(path), "1" if mmap else "0"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            assert child.stdout.readline().startswith(b"start")
            time.sleep(0.005 * attempt)
            os.truncate(path, 4096)
            out, err = child.communicate(timeout=120)
            seen.append((mmap, attempt, child.returncode, out, err[-300:]))
            if mmap:
                assert child.returncode in (0, -7), seen[-1]
                hit = child.returncode == -7
            else:
                assert child.returncode == 0, seen[-1]
                if out.startswith(b"oserror"):
                    # The note is the OSError's text (notes of a failed run are not warnings).
                    assert b"shrank while it was read" in out + err, seen[-1]
                    hit = True
                else:
                    assert out.startswith(b"rows"), seen[-1]
            if hit:
                break
        # A miss on every attempt (a very fast or very slow machine) proves nothing either
        # way for mmap; for the default road it must have been hit.
        if not mmap:
            assert hit, seen


def test_a_gzip_file_reads_like_the_plain_one(tmp_path):
    """The engine decompresses by the file's first bytes, whatever its name: the same rows
    (offsets and lines count in the decompressed bytes)."""
    import gzip

    packed = tmp_path / "traffic.ndjson.gz"
    packed.write_bytes(gzip.compress(SAMPLE.read_bytes()))
    plain, unpacked = rpcscan.scan(SAMPLE), rpcscan.scan(packed)
    assert unpacked.num_rows == plain.num_rows > 0
    for name in COLUMNS:
        assert unpacked.column(name).to_pylist() == plain.column(name).to_pylist(), name


def many_blocks(tmp_path):
    """Sample traffic repeated past 3 MB (several blocks of the parallel scan), as a file."""
    data = SAMPLE.read_bytes()
    path = tmp_path / "blocks.ndjson"
    path.write_bytes(data * ((3 << 20) // len(data) + 1))
    return path


def test_every_buffer_is_scanned_in_place_like_the_file(tmp_path):
    """Any object with the buffer protocol gives the file's table, cut into the same
    blocks (the same chunks): the parallel road of a file, not a pipe's."""
    path = many_blocks(tmp_path)
    want = rpcscan.read_log(path)
    assert want.column("kind").num_chunks > 1
    data = path.read_bytes()
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        anonymous = mmap.mmap(-1, len(data))
        anonymous.write(data)
        for source in (
            data,
            bytearray(data),
            memoryview(data),
            memoryview(bytearray(data)),
            memoryview(bytearray(data)).toreadonly(),
            mapped,
            anonymous,
            array.array("B", data),
        ):
            got = rpcscan.read_log(source)
            assert got.equals(want), type(source)
            assert got.column("kind").num_chunks == want.column("kind").num_chunks
            table, summary = rpcscan.pair(source)
            assert summary["pairs"] > 0
        anonymous.close()
    # The export is released when the scan returns: the bytearray can grow again.
    grown = bytearray(data[:1000])
    rpcscan.read_log(grown)
    grown.extend(b"\n")
    # A memoryview slice is read where it lies.
    view = memoryview(data)[: data.index(b"\n") + 1]
    assert rpcscan.read_log(view).num_rows == 1


def test_a_buffer_is_not_copied(tmp_path):
    """Peak memory while scanning 64 MB of bytes stays well under a second copy of them
    (in a fresh interpreter, so other tests' allocations do not count)."""
    path = many_blocks(tmp_path)
    big = tmp_path / "64mb.ndjson"
    data = path.read_bytes()
    big.write_bytes(data * ((64 << 20) // len(data) + 1))
    script = f"""
import resource, rpcscan
data = open({str(big)!r}, "rb").read()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
rpcscan.read_log(memoryview(data)[:1000])  # the pool and the module warmed up
table = rpcscan.read_log(data)
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(grown * 1024, len(data), table.nbytes)
"""
    out = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True)
    grown, size, table_bytes = map(int, out.stdout.split())
    # The table itself is held; a copy of the input would add `size` on top of it.
    assert grown < table_bytes + size // 2, (grown, size, table_bytes)


def test_columns_of_a_dropped_table_are_reused_without_mixing_tables(tmp_path):
    """A dropped table's column storage goes to the next read (src/pool.rs): the next
    tables hold their own values, and a table still alive is never written to."""
    path = many_blocks(tmp_path)
    other = tmp_path / "other.ndjson"
    other.write_bytes(
        b"".join(
            b'{"jsonrpc":"2.0","id":"r%d","method":"tools/call","params":{"name":"t%d"}}\n'
            b'{"jsonrpc":"2.0","id":%d,"error":{"code":-3%d,"message":"no"}}\n[1,%d]\n'
            % (i, i % 97, i, i % 10, i)
            for i in range(60_000)
        )
    )
    want = rpcscan.read_log(path).to_pylist()
    want_other = rpcscan.read_log(other).to_pylist()
    for _ in range(3):
        kept = rpcscan.read_log(path)
        dropped = rpcscan.read_log(other)
        assert dropped.to_pylist() == want_other
        del dropped
        # Into the storage `dropped` gave back, while `kept` stays alive.
        again = rpcscan.read_log(other)
        assert kept.to_pylist() == want
        assert again.to_pylist() == want_other
        del kept, again


def test_non_contiguous_buffers_are_refused_clearly():
    data = b'{"jsonrpc":"2.0","id":1,"method":"m"}\n' * 4
    strided = memoryview(data)[::2]
    for call in (rpcscan.read_log, rpcscan.classify, rpcscan.parse, rpcscan.pair):
        with pytest.raises(TypeError, match="not contiguous"):
            call(strided)
    with pytest.raises(TypeError, match="buffer protocol"):
        rpcscan.classify(3.5)


def test_notes_are_warnings_not_stderr(capfd):
    binary = b"\x00\x01garbage\n" + b'{"jsonrpc":"2.0","id":1,"method":"m"}\n'
    for source in (binary, bytearray(binary), iter([binary])):
        with pytest.warns(rpcscan.ScanWarning, match="looks binary"):
            table = rpcscan.read_log(source)
        assert table.column("kind").to_pylist() == ["invalid", "request"]
        with pytest.warns(rpcscan.ScanWarning, match="looks binary"):
            rpcscan.pair(source if not isinstance(source, type(iter([]))) else [binary])
    # Content-Length framing: a streamed road, the same note.
    with pytest.warns(rpcscan.ScanWarning, match="looks binary"):
        rpcscan.read_log(b"Content-Length: 3\r\n\r\n\x00{}", framing="content-length")
    assert capfd.readouterr().err == ""
    with warnings.catch_warnings():
        warnings.simplefilter("error", rpcscan.ScanWarning)
        with pytest.raises(rpcscan.ScanWarning):
            rpcscan.read_log(binary)


def test_scan_is_a_deprecated_alias_of_read_log():
    data = SAMPLE.read_bytes()
    with pytest.warns(DeprecationWarning, match="read_log"):
        table = rpcscan.scan(data, mode="envelope")
    assert table.equals(rpcscan.read_log(data, mode="envelope"))


def test_error_codes_beyond_int64_are_kept_exactly(cli, tmp_path):
    codes = ["-32601", "99999999999999999999", "-9223372036854775808", "9223372036854775808", "-0", "7" * 5000]
    lines = [f'{{"jsonrpc":"2.0","id":{i},"error":{{"code":{c},"message":"m"}}}}' for i, c in enumerate(codes)]
    path = tmp_path / "codes.ndjson"
    path.write_text("\n".join(lines) + "\n")
    table = rpcscan.read_log(path)
    assert table.column("error_code_text").to_pylist() == codes
    fits = [int(c) if len(c) < 30 and -(2**63) <= int(c) < 2**63 else None for c in codes]
    assert table.column("error_code").to_pylist() == fits
    # `classify --json` prints each code verbatim: the same text.
    out = subprocess.run([cli, "classify", "--json", str(path)], check=True, capture_output=True).stdout
    for line, code in zip(out.splitlines(), codes):
        assert f'"error_code":{code},'.encode() in line or f'"error_code":{code}}}'.encode() in line
    # pair's table keeps it too.
    requests = "".join(f'{{"jsonrpc":"2.0","id":{i},"method":"m"}}\n' for i in range(len(codes)))
    events, _ = rpcscan.pair(requests.encode() + path.read_bytes())
    assert events.column("error_code_text").to_pylist() == codes
