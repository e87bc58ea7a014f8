"""The package's PEP 517 build backend: maturin's, except that it never downloads Rust.

maturin's backend, when ``cargo`` is not on PATH, installs a whole Rust toolchain into a
temporary directory (through PyPI ``puccinialin``) unless ``MATURIN_NO_INSTALL_RUST`` is
set. A ``pip install`` should not fetch and run a compiler toolchain behind the user's
back: this wrapper sets that variable and fails at once, saying what to install, when
``cargo`` is missing. Everything else is maturin's.
"""

from __future__ import annotations

import os
import shutil

os.environ["MATURIN_NO_INSTALL_RUST"] = "1"

from maturin import *  # noqa: E402,F401,F403  (the PEP 517 hooks)
from maturin import (  # noqa: E402
    build_editable as _build_editable,
    build_sdist as _build_sdist,
    build_wheel as _build_wheel,
    prepare_metadata_for_build_wheel as _prepare_metadata_for_build_wheel,
)

NO_CARGO = """rpcscan: building the package needs Rust: `cargo` is not on PATH.

rpcscan's extension is Rust, compiled at install time from a source checkout or sdist.
Install a Rust toolchain (https://rustup.rs, or the system's package manager: Debian
and Ubuntu `apt install cargo`) and put `cargo` on PATH, then install again. Nothing was
downloaded: this build backend never installs a toolchain on its own.
"""


def _need_cargo() -> None:
    if shutil.which("cargo") is None:
        raise SystemExit(NO_CARGO)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    _need_cargo()
    return _prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _need_cargo()
    return _build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    _need_cargo()
    return _build_editable(wheel_directory, config_settings, metadata_directory)


def build_sdist(sdist_directory, config_settings=None):
    _need_cargo()
    return _build_sdist(sdist_directory, config_settings)
