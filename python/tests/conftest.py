"""Shared fixtures: the rule book's table (written by the `spectable` crate) and the CLI."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess

import pytest

PYTHON_DIR = pathlib.Path(__file__).resolve().parent.parent


def _spec_rows():
    """The oracle's table as JSON: $RPCSCAN_SPEC_TABLE (python/ci.sh writes it), else built
    here with cargo."""
    path = os.environ.get("RPCSCAN_SPEC_TABLE")
    if path:
        text = pathlib.Path(path).read_text()
    else:
        cargo = shutil.which("cargo")
        if cargo is None:
            pytest.skip("no spec table: set RPCSCAN_SPEC_TABLE or install cargo")
        text = subprocess.run(
            [cargo, "run", "-q", "--release", "-p", "rpcscan-python-spectable"],
            cwd=PYTHON_DIR,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    return json.loads(text)


@pytest.fixture(scope="session")
def spec_rows():
    rows = _spec_rows()
    assert len(rows) > 50
    return rows


@pytest.fixture(scope="session")
def cli():
    """The `rpcscan` binary: $RPCSCAN_BIN, else one on PATH; the test skips without it."""
    path = os.environ.get("RPCSCAN_BIN") or shutil.which("rpcscan")
    if not path:
        pytest.skip("no rpcscan binary: set RPCSCAN_BIN")
    return path


@pytest.fixture(scope="session")
def pairlog(tmp_path_factory):
    """`pairlog(seed, wrapper, *extra)` writes a generated log with known pairs (the oracle's
    `pairlog`, through spectable's `pairlog` binary: $RPCSCAN_PAIRLOG, else built here with
    cargo) and returns (path, the `rpcscan` options that read it, the reference's events)."""
    binary = os.environ.get("RPCSCAN_PAIRLOG")
    if binary:
        command = [binary]
    else:
        cargo = shutil.which("cargo")
        if cargo is None:
            pytest.skip("no pairlog: set RPCSCAN_PAIRLOG or install cargo")
        command = [cargo, "run", "-q", "--release", "-p", "rpcscan-python-spectable", "--bin", "pairlog", "--"]
    where = tmp_path_factory.mktemp("pairlog")

    def make(seed, wrapper, *extra):
        path = where / f"{wrapper}-{seed}-{'-'.join(map(str, extra))}.log"
        out = subprocess.run(
            [*command, str(seed), wrapper, str(path), *map(str, extra)],
            cwd=PYTHON_DIR,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        made = json.loads(out)
        return path, made["args"], made["events"]

    return make
