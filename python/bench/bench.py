"""rpcscan's Python benchmarks (issue 23): per-message classify against the fastest pure
Python anchors, and scan(path) against a Python loop over the same lines.

    python bench/bench.py                 # small sizes: a smoke run, not a measurement
    python bench/bench.py --scan-mb 1024  # the README's figures (a 1 GB generated log)

Contenders are interleaved (each timed once per round) and ratios taken within a round,
median over rounds; the Python loops over the whole log run once (they take long).

Anchors, each doing the same checks (docs/spec.md §3 envelope rules, simplified to what a
Python gateway usually checks: jsonrpc == "2.0", id type, method / result / error):
json.loads, orjson.loads and msgspec.json.decode into tagged Structs, when installed.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import rpcscan

REPO = pathlib.Path(__file__).resolve().parents[2]
SAMPLE = REPO / "examples" / "mcp-traffic.ndjson"


def kind_of(obj) -> str:
    """The envelope checks a Python gateway would do on a decoded message."""
    if not isinstance(obj, dict) or obj.get("jsonrpc") != "2.0":
        return "invalid"
    has_id = "id" in obj
    ident = obj.get("id")
    if ident is not None and not isinstance(ident, (int, str)) or isinstance(ident, bool):
        return "invalid"
    if "method" in obj:
        if not isinstance(obj["method"], str):
            return "invalid"
        return "request" if has_id and ident is not None else (
            "notification" if not has_id else "invalid"
        )
    if ("result" in obj) == ("error" in obj) or not has_id:
        return "invalid"
    return "result" if "result" in obj else "error"


def json_classify(line: bytes) -> str:
    try:
        return kind_of(json.loads(line))
    except ValueError:
        return "invalid"


def anchors():
    found = {"json.loads": json_classify}
    try:
        import orjson

        def orjson_classify(line: bytes) -> str:
            try:
                return kind_of(orjson.loads(line))
            except orjson.JSONDecodeError:
                return "invalid"

        found["orjson.loads"] = orjson_classify
    except ImportError:
        pass
    try:
        import msgspec

        decoder = msgspec.json.Decoder()  # untyped: tagged Structs need a schema per kind

        def msgspec_classify(line: bytes) -> str:
            try:
                return kind_of(decoder.decode(line))
            except msgspec.DecodeError:
                return "invalid"

        found["msgspec.json"] = msgspec_classify
    except ImportError:
        pass
    return found


def per_message(lines, repeat, rounds):
    """Every contender timed once per round; per-message medians, and rpcscan's speed-up
    over each anchor taken within the round (median over rounds)."""
    print(f"classify, {len(lines)} messages x {repeat}, {rounds} rounds")
    contenders = {"rpcscan.classify": rpcscan.classify, **anchors()}
    times = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, fn in contenders.items():
            start = time.perf_counter()
            for _ in range(repeat):
                for line in lines:
                    fn(line)
            times[name].append((time.perf_counter() - start) / (repeat * len(lines)) * 1e9)
    ours = times["rpcscan.classify"]
    for name, ns in times.items():
        ratio = statistics.median(t / o for t, o in zip(ns, ours))
        print(f"  {name:20} {statistics.median(ns):8.0f} ns/message  ({ratio:.1f}x rpcscan's time)")


def cpu_seconds(who) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def whole_file(path, size, rounds):
    """scan(path) and `rpcscan stats` interleaved, `rounds` times (medians); the Python loops
    once each (they are slow)."""
    print(f"scan, {size / 1e6:.1f} MB, {rounds} rounds")
    rpcscan.scan(b"{}")  # warm-up: the first call imports pyarrow
    cli = os.environ.get("RPCSCAN_BIN") or shutil.which("rpcscan")
    ours, theirs = [], []
    # CPU seconds (user + system, all threads): less disturbed by other load than wall time.
    ours_cpu, theirs_cpu = [], []
    rows = 0
    for _ in range(rounds):
        before = cpu_seconds(resource.RUSAGE_SELF)
        start = time.perf_counter()
        table = rpcscan.scan(path)
        ours.append(time.perf_counter() - start)
        ours_cpu.append(cpu_seconds(resource.RUSAGE_SELF) - before)
        rows = table.num_rows
        del table
        if cli:
            before = cpu_seconds(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run([cli, "stats", "--json", str(path)], check=True, capture_output=True)
            theirs.append(time.perf_counter() - start)
            theirs_cpu.append(cpu_seconds(resource.RUSAGE_CHILDREN) - before)
    took = statistics.median(ours)
    print(
        f"  rpcscan.scan          {size / took / 1e6:8.1f} MB/s ({rows} rows, "
        f"{statistics.median(ours_cpu):.3f} CPU s)"
    )
    if cli:
        ratio = statistics.median(t / o for t, o in zip(theirs, ours))
        cpu_ratio = statistics.median(t / o for t, o in zip(theirs_cpu, ours_cpu))
        print(
            f"  rpcscan stats (CLI)   {size / statistics.median(theirs) / 1e6:8.1f} MB/s "
            f"({statistics.median(theirs_cpu):.3f} CPU s, process start included; scan runs "
            f"at {ratio:.2f}x its speed, {cpu_ratio:.2f}x in CPU time)"
        )
    start = time.perf_counter()
    result = rpcscan.pair(path)
    took_pair = time.perf_counter() - start
    print(f"  rpcscan.pair          {size / took_pair / 1e6:8.1f} MB/s ({result.table.num_rows} events)")
    for name, fn in anchors().items():
        start = time.perf_counter()
        with open(path, "rb") as f:
            kinds = [fn(line) for line in f if line.strip()]
        took_py = time.perf_counter() - start
        print(
            f"  loop + {name:14} {size / took_py / 1e6:8.1f} MB/s "
            f"({len(kinds)} rows, {took_py / took:.1f}x rpcscan's time)"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--scan-mb", type=float, default=4)
    args = parser.parse_args()
    lines = [line for line in SAMPLE.read_bytes().splitlines() if line.strip()]
    per_message(lines, args.repeat, args.rounds)
    data = SAMPLE.read_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "traffic.ndjson"
        with open(path, "wb") as f:
            for _ in range(max(1, int(args.scan_mb * 1e6) // len(data))):
                f.write(data)
        whole_file(path, path.stat().st_size, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
