"""rpcscan's SQL functions in DataFusion for Python (PyPI ``datafusion`` 55).

The scalar functions of rpcscan-datafusion (``rpc_kind``, ``rpc_method``, ``rpc_id``,
``rpc_error_code``, ``rpc_tool_name``, ``rpc_invalid_reason``, ``rpc_scan``, ``rpc_text``),
run by this package's extension and handed to DataFusion through its FFI
(``__datafusion_scalar_udf__``). They read string and binary columns (``utf8``,
``large_utf8``, ``string_view``, ``binary``, ``large_binary``, ``binary_view``) in place.

Only in an extension built with the ``datafusion`` cargo feature (off by default)::

    cd python && maturin develop --release --features datafusion

    from datafusion import SessionContext
    import rpcscan.datafusion as rd

    ctx = SessionContext()
    rd.register(ctx)   # or: for f in rd.functions(): ctx.register_udf(datafusion.udf(f))
    ctx.sql("SELECT rpc_kind(line) AS kind, count(*) FROM logs GROUP BY 1").show()
"""

from __future__ import annotations

from typing import Any, List

try:
    # DATAFUSION_MAJOR: the major version of DataFusion the functions are built for (the
    # FFI's: datafusion-ffi's major version is DataFusion's).
    from ._rpcscan import DATAFUSION_FFI_MAJOR as DATAFUSION_MAJOR
    from ._rpcscan import Function, datafusion_functions as _datafusion_functions
except ImportError:
    raise ImportError(
        "rpcscan.datafusion needs an rpcscan extension built with the `datafusion` cargo "
        "feature, and this one was built without it; rebuild it from the repository's "
        "python/ folder with `maturin develop --release --features datafusion` (or "
        "`MATURIN_PEP517_ARGS='--features datafusion' pip install ./python`)"
    ) from None

__all__ = [
    "DATAFUSION_MAJOR",
    "DEFAULT_MAX_MESSAGE_SIZE",
    "Function",
    "functions",
    "register",
    "udfs",
]

#: Messages longer than this are ``invalid`` / ``too_large`` (16 MiB, the CLI's default).
DEFAULT_MAX_MESSAGE_SIZE = 16 * 1024 * 1024


def functions(max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> List[Function]:
    """Every rpcscan function as an object with ``__datafusion_scalar_udf__``: pass one to
    ``datafusion.udf()``. Messages longer than ``max_message_size`` bytes are ``invalid`` /
    ``too_large``, as in ``rpcscan.read_log`` and the CLI."""
    return _datafusion_functions(max_message_size)


def _datafusion() -> Any:
    try:
        import datafusion
    except ImportError:
        raise ImportError(
            f"rpcscan.datafusion.udfs() and register() need DataFusion for Python: "
            f"pip install 'datafusion=={DATAFUSION_MAJOR}.*'"
        ) from None
    major = str(getattr(datafusion, "__version__", "")).split(".")[0]
    if major != str(DATAFUSION_MAJOR):
        raise ImportError(
            f"rpcscan's DataFusion functions are built for datafusion {DATAFUSION_MAJOR}, "
            f"not {datafusion.__version__} (DataFusion's FFI changes between major versions): "
            f"pip install 'datafusion=={DATAFUSION_MAJOR}.*'"
        )
    return datafusion


def udfs(max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> List[Any]:
    """Every rpcscan function as a ``datafusion.ScalarUDF``, for
    ``SessionContext.register_udf`` or to call in the DataFrame API
    (``df.select(kind(col("line")))``)."""
    datafusion = _datafusion()
    return [datafusion.udf(f) for f in functions(max_message_size)]


def register(ctx: Any, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
    """Registers every rpcscan function with a ``datafusion.SessionContext``."""
    for u in udfs(max_message_size):
        ctx.register_udf(u)
