"""rpcscan's Python benchmarks (issue 23): per-message classify against the fastest pure
Python anchors, and scan(path) against a Python loop over the same lines.

    python bench/bench.py                 # small sizes: a smoke run, not a measurement
    python bench/bench.py --scan-mb 1024  # the README's figures (a 1 GB generated log)

Anchors, each doing the same checks (docs/spec.md §3 envelope rules, simplified to what a
Python gateway usually checks: jsonrpc == "2.0", id type, method / result / error):
json.loads, orjson.loads and msgspec.json.decode into tagged Structs, when installed.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
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


def per_message(lines, repeat):
    print(f"classify, {len(lines)} messages x {repeat}")
    contenders = {"rpcscan.classify": rpcscan.classify, **anchors()}
    base = None
    for name, fn in contenders.items():
        start = time.perf_counter()
        for _ in range(repeat):
            for line in lines:
                fn(line)
        ns = (time.perf_counter() - start) / (repeat * len(lines)) * 1e9
        base = base or ns
        print(f"  {name:20} {ns:8.0f} ns/message  ({ns / base:.1f}x rpcscan's time)")


def whole_file(path, size):
    print(f"scan, {size / 1e6:.1f} MB")
    rpcscan.scan(b"{}")  # warm-up: the first call imports pyarrow
    start = time.perf_counter()
    table = rpcscan.scan(path)
    took = time.perf_counter() - start
    print(f"  rpcscan.scan          {size / took / 1e6:8.1f} MB/s ({table.num_rows} rows)")
    for name, fn in anchors().items():
        start = time.perf_counter()
        with open(path, "rb") as f:
            kinds = [fn(line) for line in f if line.strip()]
        took_py = time.perf_counter() - start
        print(f"  loop + {name:14} {size / took_py / 1e6:8.1f} MB/s ({len(kinds)} rows, {took_py / took:.1f}x rpcscan's time)")
    cli = os.environ.get("RPCSCAN_BIN") or shutil.which("rpcscan")
    if cli:
        start = time.perf_counter()
        subprocess.run([cli, "stats", "--json", str(path)], check=True, capture_output=True)
        took_cli = time.perf_counter() - start
        print(f"  rpcscan stats (CLI)   {size / took_cli / 1e6:8.1f} MB/s (process start included)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scan-mb", type=float, default=4)
    args = parser.parse_args()
    lines = [line for line in SAMPLE.read_bytes().splitlines() if line.strip()]
    per_message(lines, args.repeat)
    data = SAMPLE.read_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "traffic.ndjson"
        with open(path, "wb") as f:
            for _ in range(max(1, int(args.scan_mb * 1e6) // len(data))):
                f.write(data)
        whole_file(path, path.stat().st_size)
    return 0


if __name__ == "__main__":
    sys.exit(main())
