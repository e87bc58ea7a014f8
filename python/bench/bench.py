"""rpcscan's Python benchmarks: per-message classify against the fastest pure Python
anchors; read_log(path) against `rpcscan stats` (the CLI), read_log(bytes), DuckDB's
read_json and polars.read_ndjson (and the Polars plugin, when rpcscan has one).

    pip install -r requirements-dev.txt -r bench/requirements.txt   # the pinned anchors
    python bench/bench.py                 # small sizes: a smoke run, not a measurement
    python bench/bench.py --cli ../target/release/rpcscan --scan-mb 500 --rounds 9
                                          # docs/performance.md's figures (500 MB log)
    python bench/bench.py --only tables --scan-mb 256   # only the whole-file readers

The CLI is `--cli`, else $RPCSCAN_BIN, else `rpcscan` on PATH (build it with
`cargo build --release -p rpcscan-cli`). Contenders are interleaved (each timed once per
round) and ratios taken within a round, median over rounds; the Python loops over the whole
log (`--loops`) run once (they take long). Every figure is CPU time (user + system of the
process, all its threads; the CLI's from its own process, start included), which other load
disturbs less than wall time. The CPU's model and the load average are printed with them.

Anchors, each doing the same checks (the rule book's §3 envelope rules, simplified to what
a Python gateway usually checks: jsonrpc == "2.0", id type, method / result / error):
json.loads, orjson.loads, msgspec.json.decode untyped, and msgspec decoding straight into a
typed Struct (the strongest Python anchor: the schema check happens in C), when installed.

DuckDB's read_json and polars.read_ndjson cannot read a raw log (they stop at its invalid
lines), so they read a copy holding only the lines rpcscan calls valid; read_log reads the
same copy for the ratio.
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


try:
    import msgspec
    from typing import Literal, Union

    class Error(msgspec.Struct):
        code: int
        message: str
        data: Union[msgspec.Raw, msgspec.UnsetType] = msgspec.UNSET

    class Envelope(msgspec.Struct):
        jsonrpc: Literal["2.0"]
        id: Union[int, str, None, msgspec.UnsetType] = msgspec.UNSET
        method: Union[str, msgspec.UnsetType] = msgspec.UNSET
        params: Union[msgspec.Raw, msgspec.UnsetType] = msgspec.UNSET
        result: Union[msgspec.Raw, msgspec.UnsetType] = msgspec.UNSET
        error: Union[Error, msgspec.UnsetType] = msgspec.UNSET

except ImportError:
    pass


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
        found["msgspec Struct"] = msgspec_struct_classifier(msgspec)
    except ImportError:
        pass
    return found


def msgspec_struct_classifier(msgspec):
    """msgspec decoding into a typed Struct (`Envelope`, below): the envelope's types
    checked by the decoder (in C), members rpcscan does not read kept as raw JSON
    (msgspec.Raw, not decoded)."""
    UNSET = msgspec.UNSET
    decoder = msgspec.json.Decoder(Envelope)

    def struct_classify(line: bytes) -> str:
        try:
            m = decoder.decode(line)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return "invalid"
        has_result, has_error = m.result is not UNSET, m.error is not UNSET
        if m.method is not UNSET:
            if has_result or has_error:
                return "invalid"
            if m.id is UNSET:
                return "notification"
            return "request" if m.id is not None else "invalid"
        if has_result == has_error or m.id is UNSET:
            return "invalid" if has_result or not has_error else "error"
        if has_result:
            return "result" if m.id is not None else "invalid"
        return "error"

    return struct_classify


def per_message(lines, repeat, rounds):
    """Every contender timed once per round; per-message medians of the CPU time of this
    thread (the loops are single-threaded: other threads, such as OpenBLAS's spinning after
    numpy's import, are not counted), and rpcscan's speed-up over each anchor taken within
    the round (median over rounds)."""
    print(f"classify, {len(lines)} messages x {repeat}, {rounds} rounds (CPU time of the loop)")
    contenders = {"rpcscan.classify": rpcscan.classify, **anchors()}
    times = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, fn in contenders.items():
            start = time.thread_time()
            for _ in range(repeat):
                for line in lines:
                    fn(line)
            times[name].append((time.thread_time() - start) / (repeat * len(lines)) * 1e9)
    ours = times["rpcscan.classify"]
    for name, ns in times.items():
        ratio = statistics.median(t / o for t, o in zip(ns, ours))
        target = "  (target >= 5x)" if name == "orjson.loads" else ""
        print(
            f"  {name:20} {statistics.median(ns):8.0f} ns/message  ({ratio:.1f}x rpcscan's "
            f"time){target}"
        )


def cpu_seconds(who) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def cli_path(given):
    return given or os.environ.get("RPCSCAN_BIN") or shutil.which("rpcscan")


def whole_file(path, size, rounds, cli, loops):
    """read_log(path) and `rpcscan stats` interleaved, `rounds` times: CPU seconds of each
    (read_log's: this process, all threads; stats': its own process, start included), the
    ratio taken within each round, medians. With `loops`, `pair` and the Python loops
    over the lines, once each (they are slow)."""
    print(f"read_log(path) against `rpcscan stats`, {size / 1e6:.1f} MB, {rounds} rounds")
    rpcscan.read_log(b"{}")  # warm-up: the first call imports pyarrow
    ours, theirs = [], []
    rows = 0
    for _ in range(rounds):
        before = cpu_seconds(resource.RUSAGE_SELF)
        table = rpcscan.read_log(path)
        ours.append(cpu_seconds(resource.RUSAGE_SELF) - before)
        rows = table.num_rows
        del table
        if cli:
            before = cpu_seconds(resource.RUSAGE_CHILDREN)
            subprocess.run([cli, "stats", "--json", str(path)], check=True, capture_output=True)
            theirs.append(cpu_seconds(resource.RUSAGE_CHILDREN) - before)
    took = statistics.median(ours)
    print(
        f"  rpcscan.read_log(path)  {took:7.3f} CPU s  {size / took / 1e6:7.1f} MB per CPU s "
        f"({rows} rows; rounds {min(ours):.3f}-{max(ours):.3f})"
    )
    if cli:
        ratio = statistics.median(t / o for t, o in zip(theirs, ours))
        spread = sorted(t / o for t, o in zip(theirs, ours))
        cli_took = statistics.median(theirs)
        print(
            f"  rpcscan stats (CLI)     {cli_took:7.3f} CPU s  {size / cli_took / 1e6:7.1f} MB "
            f"per CPU s (rounds {min(theirs):.3f}-{max(theirs):.3f})"
        )
        print(
            f"  read_log runs at {ratio:.2f}x the CPU speed of stats (rounds {spread[0]:.2f}-"
            f"{spread[-1]:.2f}; target >= 0.9x: {'met' if ratio >= 0.9 else 'not met'})"
        )
    else:
        print("  rpcscan stats: no CLI (give --cli, or set RPCSCAN_BIN)")
    if not loops:
        return
    took_pair, result = cpu_of(lambda: rpcscan.pair(path))
    print(f"  rpcscan.pair            {took_pair:7.3f} CPU s ({result.table.num_rows} events)")
    for name, fn in anchors().items():
        def loop():
            with open(path, "rb") as f:
                return [fn(line) for line in f if line.strip()]

        took_py, kinds = cpu_of(loop)
        print(
            f"  loop + {name:16} {took_py:7.3f} CPU s "
            f"({len(kinds)} rows, {took_py / took:.1f}x read_log's CPU)"
        )


def cpu_of(fn):
    """CPU seconds (user + system, every thread of this process) `fn()` took, and its
    result."""
    before = cpu_seconds(resource.RUSAGE_SELF)
    result = fn()
    return cpu_seconds(resource.RUSAGE_SELF) - before, result


def interleaved(contenders, rounds):
    """Each contender once per round, in turn; CPU seconds per contender per round."""
    cpu = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, fn in contenders.items():
            took, result = cpu_of(fn)
            del result
            cpu[name].append(took)
    return cpu


def report(cpu, base, size, rows):
    ours = cpu[base]
    for name, times in cpu.items():
        ratio = statistics.median(t / o for t, o in zip(times, ours))
        print(
            f"  {name:34} {statistics.median(times):7.3f} CPU s  {size / statistics.median(times) / 1e6:7.1f} "
            f"MB per CPU s  ({ratio:.2f}x {base}'s CPU){rows.get(name, '')}"
        )


def bytes_and_path(path, size, rounds):
    """read_log(bytes) and read_log(mmap) against read_log(path), interleaved."""
    import mmap

    data = path.read_bytes()
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        contenders = {
            "read_log(path)": lambda: rpcscan.read_log(path),
            "read_log(bytes)": lambda: rpcscan.read_log(data),
            "read_log(bytearray)": lambda: rpcscan.read_log(bytearray_data),
            "read_log(mmap.mmap)": lambda: rpcscan.read_log(mapped),
        }
        bytearray_data = bytearray(data)
        print(f"read_log of a path and of buffers, {size / 1e6:.1f} MB, {rounds} rounds")
        report(interleaved(contenders, rounds), "read_log(path)", size, {})


def polars_plugin():
    """The rpcscan Polars plugin's reader, when this rpcscan has one (rpcscan.polars):
    a hook filled where the plugin lives; None without it."""
    try:
        from rpcscan import polars as rpl  # noqa: F401
    except ImportError:
        return None
    read = getattr(rpl, "bench_reader", None)
    return read


def tables(path, size, rounds):
    """read_log against DuckDB's read_json and polars.read_ndjson, on the lines rpcscan
    calls valid (the others stop at an invalid line)."""
    table = rpcscan.read_log(path)
    import pyarrow.compute as pc

    valid = pc.not_equal(table.column("kind"), "invalid").to_pylist()
    lines = path.read_bytes().split(b"\n")
    clean = path.with_name("valid.ndjson")
    with open(clean, "wb") as f:
        f.writelines(line + b"\n" for line, ok in zip((l for l in lines if l.strip()), valid) if ok)
    del table, lines
    clean_size = clean.stat().st_size
    contenders = {"rpcscan.read_log": lambda: rpcscan.read_log(clean)}
    try:
        import duckdb

        con = duckdb.connect()
        # The members a router reads, as columns: read_json infers the rest of the schema.
        query = (
            "SELECT jsonrpc, id, method, error.code AS error_code, params.name AS tool_name "
            f"FROM read_json('{clean}', format = 'newline_delimited', union_by_name = true)"
        )
        contenders["duckdb read_json (to Arrow)"] = lambda: con.sql(query).arrow().read_all()
    except ImportError:
        pass
    try:
        import polars as pl

        # Its inference fails on MCP traffic (results of different shapes): the members
        # a router reads, as a schema.
        schema = {
            "jsonrpc": pl.String,
            "id": pl.String,
            "method": pl.String,
            "error": pl.Struct({"code": pl.Int64, "message": pl.String}),
            "params": pl.Struct({"name": pl.String}),
        }
        contenders["polars.read_ndjson"] = lambda: pl.read_ndjson(clean, schema=schema)
    except ImportError:
        pass
    plugin = polars_plugin()
    if plugin is not None:
        contenders["rpcscan Polars plugin"] = lambda: plugin(clean)
    print(
        f"whole-file readers on the valid lines, {clean_size / 1e6:.1f} MB, {rounds} rounds "
        f"(Polars plugin: {'yes' if plugin else 'not in this build'})"
    )
    report(interleaved(contenders, rounds), "rpcscan.read_log", clean_size, {})


def cpu_model() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return "unknown CPU"


def versions() -> str:
    from importlib import metadata

    found = []
    for name in ["orjson", "msgspec", "polars", "duckdb", "pyarrow"]:
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            found.append(f"{name} missing")
    return ", ".join(found)


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--scan-mb", type=float, default=4)
    parser.add_argument("--cli", help="the rpcscan binary (default: $RPCSCAN_BIN, PATH)")
    parser.add_argument(
        "--loops", action="store_true",
        help="also pair() and the Python loops over the whole log, once each (slow)",
    )
    parser.add_argument(
        "--only", choices=["classify", "scan", "buffers", "tables"], action="append",
        help="run only these parts (default: all)",
    )
    args = parser.parse_args()
    parts = set(args.only or ["classify", "scan", "buffers", "tables"])
    cli = cli_path(args.cli)
    print(f"CPU: {cpu_model()}, {os.cpu_count()} CPUs; {load()}")
    print(f"Python {sys.version.split()[0]}; {versions()}; CLI: {cli or 'none'}")
    lines = [line for line in SAMPLE.read_bytes().splitlines() if line.strip()]
    if "classify" in parts:
        per_message(lines, args.repeat, args.rounds)
    data = SAMPLE.read_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "traffic.ndjson"
        with open(path, "wb") as f:
            for _ in range(max(1, int(args.scan_mb * 1e6) // len(data))):
                f.write(data)
        size = path.stat().st_size
        rpcscan.read_log(b"{}")  # warm-up: the first call imports pyarrow
        if "scan" in parts:
            whole_file(path, size, args.rounds, cli, args.loops)
        if "buffers" in parts:
            bytes_and_path(path, size, args.rounds)
        if "tables" in parts:
            tables(path, size, args.rounds)
    print(f"end: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
