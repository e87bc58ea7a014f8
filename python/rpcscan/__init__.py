"""rpcscan: classify, parse, answer and scan JSON-RPC 2.0 / MCP messages.

The verdicts are the Rust library's (docs/spec.md in the repository): five kinds, a named
reason and JSON-RPC code for every invalid message, ids kept exact.

>>> import rpcscan
>>> rpcscan.classify(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
'request'
>>> m = rpcscan.parse('{"jsonrpc":"2.0","id":18446744073709551617,"method":"tools/call","params":{"name":"get_weather"}}')
>>> m.id, m.method, m.tool_name
(18446744073709551617, 'tools/call', 'get_weather')
>>> try:
...     rpcscan.parse(b'{"jsonrpc":"2.0","id":null,"method":"ping"}')
... except rpcscan.InvalidMessage as e:
...     print(e.reason, e.code)
bad_id -32600
>>> rpcscan.respond(b'{"jsonrpc":"2.0","id":7,"method":"nope"}')
b'{"jsonrpc": "2.0", "id": 7, "error": {"code": -32601, "message": "Method not found"}}'
"""

from __future__ import annotations

import datetime
import os
from typing import Any, Dict, Iterable, Iterator, Optional, Union

from ._rpcscan import Message, Table, classify, parse, reasons, respond
from . import _rpcscan

__all__ = [
    "InvalidMessage",
    "Message",
    "PairResult",
    "Table",
    "classify",
    "pair",
    "parse",
    "reasons",
    "respond",
    "scan",
]


class InvalidMessage(ValueError):
    """A message that is not valid JSON-RPC 2.0 (docs/spec.md §4).

    Attributes:
        reason: the reason's name (``"syntax"``, ``"bad_id"``, ...).
        code: the JSON-RPC error code to answer with (-32700 or -32600).
        offset: the first offending byte, for the -32700 family; else ``None``.
        id_raw: the recovered id's exact bytes, or ``None`` (answered with ``null``).

    >>> try:
    ...     rpcscan.parse(b'{"a":}')
    ... except rpcscan.InvalidMessage as e:
    ...     print(e.reason, e.code, e.offset, e.response())
    syntax -32700 5 b'{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}'
    """

    reason: str
    code: int
    offset: Optional[int]
    id_raw: Optional[bytes]

    def __init__(
        self,
        message: str,
        reason: str,
        code: int,
        offset: Optional[int],
        id_raw: Optional[bytes],
        response: bytes,
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.code = code
        self.offset = offset
        self.id_raw = id_raw
        self._response = response

    def response(self) -> bytes:
        """The exact bytes a server answers with (docs/spec.md §4 spacing)."""
        return self._response


_BYTES_LIKE = (bytes, bytearray, memoryview)


def scan(
    source: Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, Iterable[bytes], Any],
    *,
    framing: str = "auto",
    mode: str = "strict",
    max_message_size: int = 16 << 20,
    line_format: Optional[str] = None,
    json_field: Optional[str] = None,
    ts_field: Optional[str] = None,
    dir_field: Optional[str] = None,
    mmap: bool = False,
) -> Any:
    """Scans a whole log into an Arrow table, one row per message.

    ``source`` is a path (``str`` or ``os.PathLike``: NDJSON files are read with positioned
    reads in parallel blocks and scanned on all cores, with the GIL released), bytes-like data, or an iterable of
    ``bytes`` chunks concatenated as one stream (a file opened in ``"rb"`` mode works), or
    an Arrow array / chunked array of string, large string, string view, binary or binary
    view with one message per element (through the Arrow C data interface: pyarrow,
    Polars, DuckDB and nanoarrow objects; ``line`` is then the element's 1-based position,
    null elements give no row).
    ``framing`` is ``"auto"``, ``"ndjson"``, ``"content-length"``, ``"sse"`` or
    ``"json-seq"``; ``mode`` is ``"strict"`` or ``"envelope"``.

    Log lines (the CLI's *Log lines* options): ``line_format`` is a regular expression
    (Rust ``regex`` syntax) with a ``msg`` group; ``json_field`` a dotted path to the
    message in JSON records (``ts_field`` and ``dir_field`` only matter to :func:`pair`).
    Files written by ``rpcscan proxy --log`` are recognised without them.

    ``mmap=True`` memory-maps a path instead of reading it (a few percent less CPU time on a
    file in the page cache). **Risk:** if the file is truncated while it is scanned
    (``logrotate``'s ``copytruncate`` does this), touching the vanished pages raises
    ``SIGBUS``, which kills the Python interpreter; no exception can catch it. By default
    (``mmap=False``) a file that shrinks is read up to its new end and ``OSError`` is
    raised (the warning on stderr says where it shrank).

    Columns: ``line`` (NDJSON, else null), ``offset``, ``kind``, ``method``, ``id`` (the
    raw text: ``7``, ``"a"`` with quotes), ``error_code``, ``reason``, ``tool_name`` - the
    values ``rpcscan classify --json`` prints. ``kind`` and ``reason`` are
    dictionary-encoded strings (``int8`` indices: a pandas ``category``, a Polars
    ``Categorical``, a DuckDB ``VARCHAR``); the columns come in chunks, one per block of
    input scanned in parallel.

    Returns a ``pyarrow.Table`` when pyarrow is installed, else an :class:`rpcscan.Table`
    with the Arrow PyCapsule interface (``polars.from_arrow``, DuckDB, nanoarrow...).

    >>> t = rpcscan.scan(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\\n[]\\n')
    >>> t.column("kind").to_pylist()
    ['request', 'invalid']
    """
    kind, source = _source("scan", source, framing)
    extract = dict(
        line_format=line_format, json_field=json_field, ts_field=ts_field, dir_field=dir_field
    )
    if kind == "path":
        table = _rpcscan.scan_path(source, framing, mode, max_message_size, **extract, mmap=mmap)
    elif mmap:
        raise ValueError("scan: mmap=True maps a file: give a path")
    elif kind == "arrow":
        if any(v is not None for v in extract.values()):
            raise ValueError(
                "scan: an Arrow source holds one message per element (no line_format / json_field)"
            )
        table = _rpcscan.scan_arrow(source, mode, max_message_size)
    else:
        table = _rpcscan.scan_bytes(source, framing, mode, max_message_size, **extract)
    return _arrow(table)


def _source(function: str, source: Any, framing: str) -> "tuple[str, Any]":
    """``("path", str)``, ``("arrow", obj)`` or ``("bytes", bytes-like)``."""
    if isinstance(source, (str, os.PathLike)):
        return "path", os.fspath(source)
    if hasattr(source, "__arrow_c_stream__") or hasattr(source, "__arrow_c_array__"):
        if framing not in ("auto", "ndjson"):
            raise ValueError(
                f"{function}: an Arrow source holds one message per element (framing='auto')"
            )
        return "arrow", source
    if isinstance(source, _BYTES_LIKE):
        return "bytes", source
    if hasattr(source, "__iter__"):
        chunks = []
        for chunk in source:
            if not isinstance(chunk, _BYTES_LIKE):
                raise TypeError(
                    f"{function}: an iterable source must yield bytes, not {type(chunk).__name__}"
                )
            chunks.append(chunk)
        return "bytes", b"".join(chunks)
    raise TypeError(
        f"{function}: source must be a path, bytes-like, an iterable of bytes or an Arrow "
        f"array, not {type(source).__name__}"
    )


def _arrow(table: Table) -> Any:
    """A ``pyarrow.Table`` when pyarrow is installed, else the capsule-carrying ``table``."""
    try:
        import pyarrow
    except ImportError:
        return table
    return pyarrow.table(table)


class PairResult:
    """What :func:`pair` returns: ``table, summary = rpcscan.pair(path)`` unpacks it.

    ``table`` is a ``pyarrow.Table`` (or an :class:`rpcscan.Table` without pyarrow), one row
    per pair and per anomaly; ``summary`` is a ``dict`` of counts. The result itself has
    the Arrow PyCapsule interface (its table's), so ``polars.DataFrame(rpcscan.pair(path))``
    and DuckDB (``SELECT ... FROM result``) read it directly.
    """

    __slots__ = ("table", "summary")

    def __init__(self, table: Any, summary: Dict[str, Any]) -> None:
        self.table = table
        self.summary = summary

    def __iter__(self) -> Iterator[Any]:
        return iter((self.table, self.summary))

    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> object:
        return self.table.__arrow_c_stream__(requested_schema)

    def __repr__(self) -> str:
        return f"rpcscan.PairResult({self.table.num_rows} events, {self.summary['pairs']} pairs)"


def pair(
    source: Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, Iterable[bytes], Any],
    *,
    framing: str = "auto",
    mode: str = "strict",
    max_message_size: int = 16 << 20,
    line_format: Optional[str] = None,
    json_field: Optional[str] = None,
    ts_field: Optional[str] = None,
    dir_field: Optional[str] = None,
    max_in_flight: int = 1_000_000,
    timeout: Union[float, datetime.timedelta, None] = None,
) -> PairResult:
    """Matches every response to the request it answers, as ``rpcscan pair`` does.

    ``source`` and the reading options are :func:`scan`'s. Timestamps and direction labels
    come from log lines (``line_format`` groups ``ts`` and ``dir``; ``ts_field`` and
    ``dir_field`` with ``json_field``; ``rpcscan proxy --log`` files on their own): with
    them, latencies are measured, ``timeout`` (seconds, or a ``timedelta``) expires
    requests, and a response only answers a request that travelled the other way.
    ``max_in_flight`` requests are remembered at once; one more evicts the oldest as
    unanswered.

    Returns a :class:`PairResult` ``(table, summary)``. The table has one row per event,
    in the order they settle, with the members of ``rpcscan pair --json``: ``event``
    (``pair``, ``orphan``, ``null_id_error``, ``duplicate``, ``unanswered``,
    ``cancelled``, ``stray_progress``, ``stray_cancel``), ``request_line``,
    ``request_offset``, ``response_line``, ``response_offset``, ``id`` (raw text),
    ``method``, ``tool``, ``outcome`` (``result`` / ``error``), ``error_code``,
    ``latency_ms``, ``progress``, ``cancelled``, ``ending`` (``finished``, ``evicted``,
    ``timed_out``), ``earlier_line``, ``earlier_offset``. ``event``, ``outcome`` and
    ``ending`` are dictionary-encoded strings. The summary holds the counts of the closing
    ``--json`` line (``pairs``, ``unanswered``, ``evicted``, ``timed_out``, ``orphans``,
    ``duplicates``, ``cancelled``, ``null_id_errors``, ``stray_notifications``,
    ``directions``, ``undirected``), and ``methods`` / ``tools`` (count, errors by code,
    latency percentiles), ``unanswered_methods`` and ``first_lines``.

    >>> table, summary = rpcscan.pair(
    ...     b'{"jsonrpc":"2.0","id":1,"method":"ping"}\\n{"jsonrpc":"2.0","id":1,"result":{}}\\n'
    ... )
    >>> table.column("event").to_pylist(), summary["pairs"]
    (['pair'], 1)
    """
    kind, source = _source("pair", source, framing)
    if isinstance(timeout, datetime.timedelta):
        timeout = timeout.total_seconds()
    table, summary = _rpcscan.pair(
        source,
        kind,
        framing,
        mode,
        max_message_size,
        line_format,
        json_field,
        ts_field,
        dir_field,
        max_in_flight,
        timeout,
    )
    return PairResult(_arrow(table), summary)
