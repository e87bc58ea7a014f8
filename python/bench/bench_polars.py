"""rpcscan in Polars against Polars' own NDJSON reader, on the same generated log.

    python bench/bench_polars.py                 # small: a smoke run, not a measurement
    python bench/bench_polars.py --scan-mb 500   # docs/performance.md's figures

The log is examples/mcp-traffic.ndjson repeated, with its invalid lines removed (as
`polars.read_ndjson` fails on them). Contenders, each timed once per round (interleaved),
medians over rounds of CPU seconds (user + system of this process, all threads: Polars'
and rpcscan's pools) and of wall time:

- `pl.read_ndjson(path, schema=ENVELOPE)`: Polars parses every line for the envelope's
  members (no verdicts, no checks);
- `rpcscan.read_log(path)` into a `pl.DataFrame`: the eager reader, nine columns;
- `rpcscan.scan_log(path).collect()`: the same through the lazy IO source, and with a
  filter on `kind` and two columns selected (pushed down to the reader);
- `pl.scan_lines(path)` with the `.rpc` expression plugin: `kind` alone, then `kind`, `id`,
  `method` (three expressions: each scans the line once).

Needs the extension built with its `polars` feature, in a release build
(`maturin develop --release --features polars`), for the plugin rows.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import resource
import statistics
import sys
import tempfile
import time

import polars as pl

import rpcscan
import rpcscan.polars as rpl

REPO = pathlib.Path(__file__).resolve().parents[2]
SAMPLE = REPO / "examples" / "mcp-traffic.ndjson"


# The members the other contenders read. Without a schema, `pl.read_ndjson` fails on this
# log even with its invalid lines removed ("failed to determine supertype of struct[6] and
# struct[3]": `params` and `result` differ in shape between messages), with
# `infer_schema_length=None` and `ignore_errors=True` too.
ENVELOPE = {
    "jsonrpc": pl.String,
    "id": pl.String,
    "method": pl.String,
    "params": pl.Struct({"name": pl.String}),
    "error": pl.Struct({"code": pl.Int64, "message": pl.String}),
}


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def contenders(path: str):
    found = {
        "pl.read_ndjson": lambda: pl.read_ndjson(path, schema=ENVELOPE),
        "rpcscan.read_log -> pl.DataFrame": lambda: pl.DataFrame(rpcscan.read_log(path)),
        "rpcscan.scan_log().collect()": lambda: rpcscan.scan_log(path).collect(),
        # Push-down: rows of one kind, two columns.
        "scan_log, kind == error, 2 cols": lambda: (
            rpcscan.scan_log(path)
            .filter(pl.col("kind") == "error")
            .select("line", "error_code")
            .collect()
        ),
    }
    if rpl.PLUGIN:
        line = pl.col("line")
        found["scan_lines + rpc.kind"] = lambda: (
            pl.scan_lines(path).select(line.rpc.kind().alias("kind")).collect()
        )
        found["scan_lines + kind, id, method"] = lambda: (
            pl.scan_lines(path)
            .select(
                line.rpc.kind().alias("kind"),
                line.rpc.id().alias("id"),
                line.rpc.method().alias("method"),
            )
            .collect()
        )
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--scan-mb", type=float, default=4)
    args = parser.parse_args()
    lines = [
        line
        for line in SAMPLE.read_bytes().splitlines()
        if line.strip() and rpcscan.classify(line) != "invalid"
    ]
    data = b"\n".join(lines) + b"\n"
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "valid.ndjson"
        with open(path, "wb") as f:
            for _ in range(max(1, int(args.scan_mb * 1e6) // len(data))):
                f.write(data)
        size = path.stat().st_size
        print(
            f"{size / 1e6:.1f} MB, {args.rounds} rounds, polars {pl.__version__}, "
            f"plugin: {rpl.PLUGIN}, load average {os.getloadavg()[0]:.2f}"
        )
        runs = contenders(str(path))
        for fn in runs.values():  # warm-up: imports, pools, page cache
            fn()
        cpu = {name: [] for name in runs}
        wall = {name: [] for name in runs}
        rows = {}
        for _ in range(args.rounds):
            for name, fn in runs.items():
                before, start = cpu_seconds(), time.perf_counter()
                df = fn()
                wall[name].append(time.perf_counter() - start)
                cpu[name].append(cpu_seconds() - before)
                rows[name] = df.height
                del df
        base = cpu["pl.read_ndjson"]
        for name in runs:
            ratio = statistics.median(b / c for b, c in zip(base, cpu[name]))
            print(
                f"  {name:32} {statistics.median(cpu[name]):7.3f} CPU s "
                f"{statistics.median(wall[name]):7.3f} s wall  {rows[name]} rows  "
                f"read_ndjson's CPU / this: {ratio:.2f}x"
            )
        print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
