"""pair(): the events and summary of `rpcscan pair --json`, and the oracle's reference."""

from __future__ import annotations

import datetime
import json
import pathlib
import subprocess

import pytest

import rpcscan

SAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "mcp-traffic.ndjson"

pa = pytest.importorskip("pyarrow")

COLUMNS = [
    "event",
    "request_line",
    "request_offset",
    "response_line",
    "response_offset",
    "id",
    "method",
    "tool",
    "outcome",
    "error_code",
    "error_code_text",
    "latency_ms",
    "progress",
    "cancelled",
    "ending",
    "earlier_line",
    "earlier_offset",
]

SUMMARY = [
    "pairs",
    "unanswered",
    "evicted",
    "timed_out",
    "orphans",
    "duplicates",
    "cancelled",
    "null_id_errors",
    "stray_notifications",
    "directions",
    "undirected",
]


def pair_json(cli, path, *args, stdin=None):
    """`rpcscan pair --json`: (events, summary)."""
    command = [cli, "pair", "--json", *args]
    if path is not None:
        command.append(str(path))
    out = subprocess.run(command, check=True, capture_output=True, input=stdin).stdout
    objects = [json.loads(line) for line in out.splitlines()]
    assert objects[-1]["event"] == "summary"
    return objects[:-1], objects[-1]


def as_json(row):
    """A table row as `pair --json` prints it: the same members, `ending` only for
    unanswered and cancelled requests, `earlier_*` only for duplicates, the id as JSON,
    the latency with three decimals."""
    obj = dict(row)
    # The code as `pair --json` prints it: its exact text; the int64 column where it fits.
    text = obj.pop("error_code_text")
    code = None if text is None else json.loads(text)
    assert obj["error_code"] == (code if code is not None and -(2**63) <= code < 2**63 else None)
    obj["error_code"] = code
    if obj["ending"] is None:
        del obj["ending"]
    if obj["earlier_line"] is None and obj["earlier_offset"] is None:
        del obj["earlier_line"], obj["earlier_offset"]
    obj["id"] = None if row["id"] is None else json.loads(row["id"])
    if row["latency_ms"] is not None:
        obj["latency_ms"] = float(f"{row['latency_ms']:.3f}")
    return obj


def assert_same(result, events, summary):
    table, got_summary = result
    assert table.column_names == COLUMNS
    rows = table.to_pylist()
    assert len(rows) == len(events)
    for i, (row, want) in enumerate(zip(rows, events)):
        got = as_json(row)
        assert got == want, (i, row, want)
    for key in SUMMARY:
        assert got_summary[key] == summary[key], key


def test_sample_traffic_equals_pair_json(cli):
    result = rpcscan.pair(SAMPLE)
    assert isinstance(result, rpcscan.PairResult)
    assert isinstance(result.table, pa.Table)
    assert_same(result, *pair_json(cli, SAMPLE))
    summary = result.summary
    assert summary["pairs"] == sum(m["count"] for m in summary["methods"].values())
    data = SAMPLE.read_bytes()
    assert rpcscan.pair(data).table.equals(result.table)
    with open(SAMPLE, "rb") as f:
        assert rpcscan.pair(f).table.equals(result.table)
    assert_same(rpcscan.pair(SAMPLE, mode="envelope"), *pair_json(cli, SAMPLE, "--mode", "envelope"))


@pytest.mark.parametrize("wrapper", ["ndjson", "prefix", "record", "payload", "proxy-log"])
def test_generated_logs_equal_cli_and_reference(cli, pairlog, wrapper):
    """Six generated logs of 4,000 messages (several blocks), wrapped every way the CLI
    reads: pair() reports the CLI's events and summary, and the reference's events."""
    path, args, reference = pairlog(7, wrapper, 1000)
    options = {}
    it = iter(args)
    for flag in it:
        options[flag.lstrip("-").replace("-", "_")] = next(it)
    result = rpcscan.pair(path, max_in_flight=1000, **options)
    assert_same(result, *pair_json(cli, path, "--max-in-flight", "1000", *args))
    rows = result.table.to_pylist()
    assert len(rows) == len(reference)
    for i, (row, want) in enumerate(zip(rows, reference)):
        line = row["response_line"] if row["event"] in ("orphan", "null_id_error") else row["request_line"]
        got = {
            "event": row["event"],
            "line": line,
            "response_line": row["response_line"] if row["event"] == "pair" else None,
            # The reference counts progress for pairs only.
            "progress": row["progress"] if row["event"] == "pair" else 0,
            "latency_ms": None if row["latency_ms"] is None else round(row["latency_ms"]),
            "ending": row["ending"],
        }
        assert got == want, (i, row, want)
    if wrapper == "ndjson":
        assert rpcscan.pair(path.read_bytes(), max_in_flight=1000).table.equals(result.table)
    else:
        assert result.summary["directions"] is not None


def test_timeout_equals_cli_and_reference(cli, pairlog):
    path, args, reference = pairlog(12, "proxy-log", 1000, 2000)
    result = rpcscan.pair(path, max_in_flight=1000, timeout=2.0)
    assert_same(result, *pair_json(cli, path, "--max-in-flight", "1000", "--timeout", "2s"))
    assert [r["ending"] for r in result.table.to_pylist()] == [e["ending"] for e in reference]
    assert result.summary["timed_out"] > 0
    again = rpcscan.pair(path, max_in_flight=1000, timeout=datetime.timedelta(seconds=2))
    assert again.table.equals(result.table)


def lines(*messages):
    return "".join(m + "\n" for m in messages).encode()


def test_table_cases():
    log = lines(
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":"t"}}}',
        '{"jsonrpc":"2.0","id":1,"method":"ping"}',  # duplicate in flight
        '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"\\u0074","progress":1}}',
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}',  # answers the first
        '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}',
        '{"jsonrpc":"2.0","id":18446744073709551617,"method":"tools/list"}',
        '{"jsonrpc":"2.0","id":18446744073709551616,"result":{}}',  # orphan: another number
        '{"jsonrpc":"2.0","id":18446744073709551617,"result":{}}',
        '{"jsonrpc":"2.0","id":"a","method":"slow"}',
        '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"\\u0061"}}',
        '{"jsonrpc":"2.0","id":"x","method":"never"}',
    )
    table, summary = rpcscan.pair(log)
    rows = [(r["event"], r["request_line"], r["response_line"], r["id"]) for r in table.to_pylist()]
    assert rows == [
        ("duplicate", 2, None, "1"),
        ("pair", 1, 4, "1"),
        ("null_id_error", None, 5, "null"),
        ("orphan", None, 7, "18446744073709551616"),
        ("pair", 6, 8, "18446744073709551617"),
        # At the end, oldest first: the duplicate ping still waits behind the answered call.
        ("unanswered", 2, None, "1"),
        ("cancelled", 9, None, '"a"'),
        ("unanswered", 11, None, '"x"'),
    ]
    first = table.to_pylist()[1]
    assert (first["tool"], first["outcome"], first["error_code"], first["progress"]) == ("echo", "error", -32602, 1)
    assert table.to_pylist()[0]["earlier_line"] == 1
    assert [r["ending"] for r in table.to_pylist()][5:] == ["finished"] * 3
    assert [r["cancelled"] for r in table.to_pylist()] == [False] * 6 + [True, False]
    assert summary["pairs"] == 2 and summary["duplicates"] == 1 and summary["orphans"] == 1
    assert summary["null_id_errors"] == 1 and summary["cancelled"] == 1 and summary["unanswered"] == 2
    assert summary["tools"]["echo"]["errors"] == {"-32602": 1}
    assert summary["unanswered_methods"] == {
        "never": {"count": 1, "first_lines": [11]},
        "ping": {"count": 1, "first_lines": [2]},
    }
    assert summary["first_lines"]["duplicates"] == [2]


def test_duplicate_waits_and_is_answered_second():
    log = lines(
        '{"jsonrpc":"2.0","id":5,"method":"a"}',
        '{"jsonrpc":"2.0","id":5,"method":"b"}',
        '{"jsonrpc":"2.0","id":5,"result":1}',
        '{"jsonrpc":"2.0","id":5,"result":2}',
        '{"jsonrpc":"2.0","id":5,"result":3}',
    )
    table, summary = rpcscan.pair(log)
    got = [(r["event"], r["method"], r["request_line"], r["response_line"]) for r in table.to_pylist()]
    assert got == [
        ("duplicate", "b", 2, None),
        ("pair", "a", 1, 3),
        ("pair", "b", 2, 4),
        ("orphan", None, None, 5),
    ]
    assert (summary["pairs"], summary["duplicates"], summary["orphans"]) == (2, 1, 1)


def test_directions_and_latency():
    log = lines(
        '{"ts":"2026-11-29T10:00:00.000Z","dir":"c2s","msg":{"jsonrpc":"2.0","id":0,"method":"tools/list"}}',
        '{"ts":"2026-11-29T10:00:00.010Z","dir":"s2c","msg":{"jsonrpc":"2.0","id":0,"method":"sampling/createMessage"}}',
        '{"ts":"2026-11-29T10:00:00.050Z","dir":"c2s","msg":{"jsonrpc":"2.0","id":0,"result":{}}}',
        '{"ts":"2026-11-29T10:00:00.120Z","dir":"s2c","msg":{"jsonrpc":"2.0","id":0,"result":{}}}',
    )
    table, summary = rpcscan.pair(log)  # a proxy log: recognised
    got = [(r["method"], r["request_line"], r["response_line"], r["latency_ms"]) for r in table.to_pylist()]
    assert got == [
        ("sampling/createMessage", 2, 3, pytest.approx(40.0)),
        ("tools/list", 1, 4, pytest.approx(120.0)),
    ]
    assert summary["directions"] == ["c2s", "s2c"]
    assert summary["methods"]["tools/list"]["max_ms"] == pytest.approx(120.0)
    # Without directions nor times: one id space, the second id 0 is a duplicate.
    bare = rpcscan.pair(log, json_field="msg")
    got = [(r["event"], r["request_line"], r["response_line"], r["latency_ms"]) for r in bare.table.to_pylist()]
    assert got == [("duplicate", 2, None, None), ("pair", 1, 3, None), ("pair", 2, 4, None)]
    assert bare.summary["directions"] is None


def test_arrow_source_and_integrations():
    messages = [line for line in SAMPLE.read_bytes().split(b"\n") if line.strip()]
    want = rpcscan.pair(b"\n".join(messages)).table
    assert rpcscan.pair(pa.array(messages)).table.equals(want)
    assert rpcscan.pair(pa.chunked_array([pa.array(messages[:40]), pa.array(messages[40:])])).table.equals(want)
    pl = pytest.importorskip("polars")
    result = rpcscan.pair(SAMPLE)
    df = pl.DataFrame(result)  # the PairResult's own capsule
    assert df.columns == COLUMNS and df.height == result.table.num_rows
    assert pl.from_arrow(result.table).filter(pl.col("event") == "pair").height == result.summary["pairs"]
    assert rpcscan.pair(pl.Series(messages)).table.equals(want)
    pd = pytest.importorskip("pandas")
    frame = result.table.to_pandas()
    assert isinstance(frame, pd.DataFrame)
    assert (frame["event"] == "pair").sum() == result.summary["pairs"]
    duckdb = pytest.importorskip("duckdb")
    events = result.table  # noqa: F841 (read by name in the SQL)
    counts = dict(duckdb.sql("SELECT event::VARCHAR, count(*) FROM events GROUP BY 1").fetchall())
    assert counts["pair"] == result.summary["pairs"]


def test_errors():
    with pytest.raises(FileNotFoundError):
        rpcscan.pair("/nonexistent/traffic.ndjson")
    with pytest.raises(TypeError):
        rpcscan.pair(None)
    with pytest.raises(TypeError):
        rpcscan.pair([b"{}", 3])
    with pytest.raises(ValueError):
        rpcscan.pair(b"", timeout=-1)
    with pytest.raises(ValueError):
        rpcscan.pair(b"", line_format="no msg group")
    with pytest.raises(ValueError):
        rpcscan.pair(b"", json_field="msg", line_format="(?<msg>.*)")
    with pytest.raises(ValueError):
        rpcscan.pair(b"", ts_field="ts")
    with pytest.raises(ValueError):
        rpcscan.pair(pa.array(["{}"]), json_field="msg")
    empty, summary = rpcscan.pair(b"")
    assert empty.num_rows == 0 and summary["pairs"] == 0
    assert empty.column_names == COLUMNS


def test_framed_stream_equals_cli(cli, tmp_path):
    """Content-Length frames are decoded in order and fed to the matcher as they come (no
    line numbers): the CLI's events and summary."""
    messages = [line for line in SAMPLE.read_bytes().split(b"\n") if line.strip()]
    body = b"".join(b"Content-Length: %d\r\n\r\n%s" % (len(m), m) for m in messages)
    path = tmp_path / "lsp.log"
    path.write_bytes(body)
    result = rpcscan.pair(path, framing="content-length")
    assert_same(result, *pair_json(cli, path, "--framing", "content-length"))
    assert result.table.column("request_line").null_count == result.table.num_rows
    assert rpcscan.pair(body).table.equals(result.table)  # sniffed
    assert result.summary["pairs"] == rpcscan.pair(SAMPLE).summary["pairs"]
