"""One table of logs, every product (tests/data/agree/): `scan` and `pair` give the answers
in expected.json, which the CLI (cli/tests/agree.rs) and the DataFusion functions
(datafusion/tests/agree.rs) are held to as well."""

from __future__ import annotations

import collections
import json
import pathlib

import pytest

import rpcscan

AGREE = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "agree"
CASES = json.loads((AGREE / "cases.json").read_text())
EXPECTED = json.loads((AGREE / "expected.json").read_text())
KINDS = ["request", "notification", "result", "error", "invalid"]
OPTIONS = ["line_format", "json_field", "ts_field", "dir_field"]

pa = pytest.importorskip("pyarrow")


def options(case: dict) -> dict:
    return {key: case[key] for key in OPTIONS if key in case}


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
@pytest.mark.parametrize("read", ["path", "bytes"])
def test_scan_agrees(case: dict, read: str) -> None:
    path = AGREE / case["file"]
    source = str(path) if read == "path" else path.read_bytes()
    table = rpcscan.read_log(source, **options(case))
    want = EXPECTED[case["name"]]
    kinds = collections.Counter(table.column("kind").to_pylist())
    assert table.num_rows == want["messages"]
    assert {k: kinds.get(k, 0) for k in KINDS} == want["kinds"]
    reasons = collections.Counter(r for r in table.column("reason").to_pylist() if r is not None)
    assert dict(reasons) == want["invalid_reasons"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
@pytest.mark.parametrize("read", ["path", "bytes"])
def test_pair_agrees(case: dict, read: str) -> None:
    path = AGREE / case["file"]
    source = str(path) if read == "path" else path.read_bytes()
    table, summary = rpcscan.pair(source, **options(case))
    want = EXPECTED[case["name"]]
    names = ("event", "id", "request_line", "response_line", "tool")
    columns = [table.column(c).to_pylist() for c in names]
    # The id's raw text; `null` also where an event has none, as `pair --json` prints it.
    columns[1] = ["null" if i is None else i for i in columns[1]]
    events = [list(row) for row in zip(*columns)]
    assert events == want["pair_events"]
    assert {k: summary[k] for k in want["pair_summary"]} == want["pair_summary"]
