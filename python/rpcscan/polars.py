"""rpcscan for Polars: the ``.rpc`` expression namespace and :func:`scan_log`.

Importing this module (``import rpcscan.polars``; ``pip install 'rpcscan[polars]'``)
registers the ``.rpc`` namespace on Polars expressions: ``pl.col("line").rpc.kind()``,
``.rpc.id()``, ``.rpc.method()``, ``.rpc.tool()``, ``.rpc.error_code()``,
``.rpc.error_code_text()`` and ``.rpc.reason()`` scan a String or Binary column of
messages (one per element) inside
Polars' engine, in Rust, with the verdicts of :func:`rpcscan.classify` and
:func:`rpcscan.parse`. They need the extension built with its ``polars`` cargo feature
(``maturin develop --release --features polars``, or ``MATURIN_PEP517_ARGS='--features
polars' pip install .``); :data:`PLUGIN` says whether it was.

:func:`scan_log` reads a log file lazily, as ``pl.scan_ndjson`` does, into the columns of
the eager reader; a query's projection and its filters on ``kind`` reach the reader, which
then fills only the columns the query reads and builds rows only of the kinds it keeps.

>>> import polars as pl, rpcscan.polars
>>> df = pl.DataFrame({"line": ['{"jsonrpc":"2.0","id":7,"method":"ping"}', '[]']})
>>> df.select(pl.col("line").rpc.kind(), pl.col("line").rpc.id().alias("id"))["line"].to_list()
['request', 'invalid']
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, FrozenSet, Iterator, List, Optional, Union

try:
    import polars as pl
    from polars.io.plugins import register_io_source
    from polars.plugins import register_plugin_function
except ImportError as e:  # pragma: no cover - exercised by the no-polars test
    raise ImportError(
        "rpcscan.polars needs Polars: pip install 'rpcscan[polars]'"
    ) from e

from . import _rpcscan

__all__ = ["PLUGIN", "RpcExpr", "scan_log"]

#: ``True`` when the extension carries the ``.rpc`` expression plugin (its ``polars``
#: feature); :func:`scan_log` works either way.
PLUGIN: bool = bool(getattr(_rpcscan, "POLARS_PLUGIN", False))

_LIBRARY = Path(_rpcscan.__file__)
_KINDS = ("request", "notification", "result", "error", "invalid")
_DEFAULT_MAX = 16 << 20


@pl.api.register_expr_namespace("rpc")
class RpcExpr:
    """``expr.rpc``: one message per element of a String or Binary column.

    Each method takes ``strict`` (``False``: envelope mode, as ``rpcscan.classify``) and
    ``max_message_size`` (longer elements are ``invalid`` / ``too_large``, as in
    :func:`rpcscan.read_log`). Null elements give null. The result keeps the input's name.
    """

    def __init__(self, expr: pl.Expr) -> None:
        self._expr = expr

    def _call(self, name: str, strict: bool, max_message_size: int) -> pl.Expr:
        if not PLUGIN:
            raise RuntimeError(
                "rpcscan was built without its polars feature: the .rpc namespace is a Polars "
                "plugin in the extension (maturin develop --features polars)"
            )
        if max_message_size < 1:
            raise ValueError("max_message_size must be at least 1")
        return register_plugin_function(
            plugin_path=_LIBRARY,
            function_name=f"rpc_{name}",
            args=self._expr,
            kwargs={"strict": bool(strict), "max_message_size": int(max_message_size)},
            is_elementwise=True,
        )

    def kind(self, *, strict: bool = True, max_message_size: int = _DEFAULT_MAX) -> pl.Expr:
        """``request``, ``notification``, ``result``, ``error`` or ``invalid`` (String)."""
        return self._call("kind", strict, max_message_size)

    def id(self, *, strict: bool = True, max_message_size: int = _DEFAULT_MAX) -> pl.Expr:
        """The id's raw JSON text (``7``, ``"a"`` with its quotes, ``null``), exact at any
        size; the recovered id of an invalid message (String)."""
        return self._call("id", strict, max_message_size)

    def method(self, *, strict: bool = True, max_message_size: int = _DEFAULT_MAX) -> pl.Expr:
        """A request's or notification's method, decoded (String)."""
        return self._call("method", strict, max_message_size)

    def tool(self, *, strict: bool = True, max_message_size: int = _DEFAULT_MAX) -> pl.Expr:
        """``params.name`` of a ``tools/call`` request, decoded (String)."""
        return self._call("tool", strict, max_message_size)

    def error_code(
        self, *, strict: bool = True, max_message_size: int = _DEFAULT_MAX
    ) -> pl.Expr:
        """An error response's ``error.code`` (Int64; null when it does not fit, as the
        ``error_code`` column of :func:`rpcscan.read_log`; ``error_code_text`` is exact)."""
        return self._call("error_code", strict, max_message_size)

    def error_code_text(
        self, *, strict: bool = True, max_message_size: int = _DEFAULT_MAX
    ) -> pl.Expr:
        """An error response's ``error.code`` as its exact decimal text, at any size
        (String; the ``error_code_text`` column of :func:`rpcscan.read_log`)."""
        return self._call("error_code_text", strict, max_message_size)

    def reason(self, *, strict: bool = True, max_message_size: int = _DEFAULT_MAX) -> pl.Expr:
        """Why an invalid message is invalid (``syntax``, ``bad_id``...; String)."""
        return self._call("reason", strict, max_message_size)


#: What each scan_log run did: the columns it filled, the kinds it kept (``None``: all),
#: and the rows the reader built. Only the last few runs are kept (for tests and tuning).
last_scans: List[Dict[str, Any]] = []


def _schema(options: Dict[str, Any]) -> "pl.Schema":
    # The eager reader's schema, as Polars reads it (the empty scan's table).
    table = _rpcscan.scan_bytes(b"", "ndjson", options["mode"], options["max_message_size"])
    return pl.DataFrame(table).schema


def _literal(expr: pl.Expr) -> Any:
    return pl.select(expr).to_series().to_list()


def _kinds(predicate: pl.Expr) -> Optional[FrozenSet[str]]:
    """The kinds a row can have for ``predicate`` to hold, when its form tells (``None``:
    any). Sound for what it reads: ``kind == "x"``, ``kind.is_in([...])``, ``&``, ``|``,
    casts of either side; anything else allows every kind."""
    try:
        return _kinds_of(predicate, _node(predicate))
    except Exception:
        return None


def _node(expr: pl.Expr) -> Any:
    return json.loads(expr.meta.serialize(format="json"))


def _is_kind_column(node: Any) -> bool:
    while isinstance(node, dict) and "Cast" in node:
        node = node["Cast"]["expr"]
    return node == {"Column": "kind"}


def _column_and_literal(expr: pl.Expr) -> Optional[List[Any]]:
    """The literal's values when ``expr``'s two inputs are ``kind`` and a literal."""
    inputs = expr.meta.pop()
    if len(inputs) != 2:
        return None
    for column, other in ((inputs[0], inputs[1]), (inputs[1], inputs[0])):
        if _is_kind_column(_node(column)) and other.meta.is_literal(allow_aliasing=True):
            return _literal(other)
    return None


def _kinds_of(expr: pl.Expr, node: Any) -> Optional[FrozenSet[str]]:
    if not isinstance(node, dict) or len(node) != 1:
        return None
    ((tag, body),) = node.items()
    if tag == "BinaryExpr":
        op = body.get("op")
        if op in ("And", "LogicalAnd", "Or", "LogicalOr"):
            sides = [_kinds_of(e, _node(e)) for e in expr.meta.pop()]
            if len(sides) != 2:
                return None
            if op in ("And", "LogicalAnd"):
                known = [s for s in sides if s is not None]
                return frozenset.intersection(*known) if known else None
            if sides[0] is None or sides[1] is None:
                return None
            return sides[0] | sides[1]
        if op == "Eq":
            values = _column_and_literal(expr)
            if values is not None and len(values) == 1 and isinstance(values[0], str):
                return frozenset(values) & frozenset(_KINDS)
        return None
    if tag == "Function":
        function = body.get("function", {})
        if isinstance(function, dict) and "IsIn" in function.get("Boolean", {}):
            values = _column_and_literal(expr)
            if values is not None and len(values) == 1 and isinstance(values[0], list):
                values = values[0]
            if values is not None and all(isinstance(v, str) for v in values):
                return frozenset(values) & frozenset(_KINDS)
        return None
    return None


def scan_log(
    source: Union[str, "os.PathLike[str]"],
    *,
    framing: str = "auto",
    mode: str = "strict",
    max_message_size: int = _DEFAULT_MAX,
    line_format: Optional[str] = None,
    json_field: Optional[str] = None,
    mmap: bool = False,
) -> pl.LazyFrame:
    """A log file as a ``polars.LazyFrame`` with the eager reader's columns: ``line``,
    ``offset``, ``kind``, ``method``, ``id``, ``error_code``, ``reason``, ``tool_name``.

    Nothing is read until the frame is collected. The reader streams batches (one per
    block of input, in order) and gets the query's projection and filters: only the
    columns read are filled, and a filter on ``kind`` (``==``, ``is_in``, combined with
    ``&`` / ``|``) keeps the reader from building rows of other kinds. Options are
    :func:`rpcscan.read_log`'s (``mmap=True`` maps the file, with its risk).

    >>> import polars as pl, rpcscan.polars, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "log.ndjson")
    >>> _ = open(path, "w").write('{"jsonrpc":"2.0","id":1,"method":"ping"}\\n[]\\n')
    >>> rpcscan.polars.scan_log(path).filter(pl.col("kind") == "invalid").select("line", "reason").collect().rows()
    [(2, 'batch')]
    """
    path = os.fspath(source)
    options = dict(
        framing=framing,
        mode=mode,
        max_message_size=max_message_size,
        line_format=line_format,
        json_field=json_field,
    )
    # Bad options fail here, not at collect().
    schema = _schema(options)
    _rpcscan.scan_bytes(b"", framing, mode, max_message_size, line_format, json_field)

    def source_batches(
        with_columns: Optional[List[str]],
        predicate: Optional[pl.Expr],
        n_rows: Optional[int],
        batch_size: Optional[int],
    ) -> Iterator[pl.DataFrame]:
        wanted = set(schema.names() if with_columns is None else with_columns)
        kinds = None
        if predicate is not None:
            wanted |= set(predicate.meta.root_names())
            kinds = _kinds(predicate)
        columns = [c for c in schema.names() if c in wanted]
        reader = _rpcscan.LogReader(
            path,
            framing,
            mode,
            max_message_size,
            line_format,
            json_field,
            columns,
            None if kinds is None else sorted(kinds),
            mmap,
        )
        record = {
            "columns": columns,
            "kinds": None if kinds is None else sorted(kinds),
            "rows": 0,
        }
        last_scans.append(record)
        del last_scans[:-8]
        left = n_rows
        try:
            for table in reader:
                df = pl.DataFrame(table)
                if predicate is not None:
                    df = df.filter(predicate)
                if with_columns is not None:
                    df = df.select(with_columns)
                if left is not None:
                    df = df.head(left)
                    left -= df.height
                record["rows"] = reader.rows
                yield df
                if left is not None and left <= 0:
                    break
        finally:
            reader.close()
            record["rows"] = reader.rows

    return register_io_source(
        source_batches,
        schema=schema,
        explain_name="rpcscan",
        explain_detail=path,
    )
