"""rpcscan: classify, parse, answer and scan JSON-RPC 2.0 / MCP messages.

The verdicts are the Rust library's, by its rule book (the full text, with every rule's
reason: https://github.com/rpcscan/rpcscan/blob/main/docs/spec.md). In short:

- §1 Verdicts. A ``request`` has ``method`` and an ``id``; a ``notification`` has
  ``method`` and no ``id`` member; a ``result`` has ``result`` and an ``id``; an ``error``
  has an ``error`` object (its ``id`` may be ``null`` or missing). Everything else is
  ``invalid``, always with a reason.
- §2 JSON. RFC 8259 to the letter, every byte checked (inside ``params`` and ``result``
  too): no byte-order mark, comments, trailing commas, ``NaN``, ``01`` or raw control
  bytes in strings; at most 1024 levels of nesting; one object and nothing after it. A
  top-level array (a batch, which MCP dropped) is invalid. Numbers have no magnitude limit.
- §3 The envelope. ``"jsonrpc": "2.0"``; no duplicated envelope key (``jsonrpc``, ``id``,
  ``method``, ``params``, ``result``, ``error``), compared after unescaping; ``method`` a
  string; ``params`` an object or an array; an id is a string or an integer literal of any
  length (``"id": null`` with a ``method`` is invalid, not a notification); an ``error``
  object has an integer ``code`` and a string ``message``. Unknown members are ignored.
- §4 Invalid messages. One named reason each (:func:`reasons` lists them with their
  codes) and the code to answer with: -32700 (Parse error) for bytes that are not JSON,
  -32600 (Invalid Request) for JSON that is not a valid message; the answer carries the
  id when one can be recovered, else ``null``.
- §5 What a valid message gives: the members a router reads (:func:`parse`), ids and
  codes exact.
- §6 Envelope mode (``strict=False``, ``mode="envelope"``): the same verdict on every
  valid JSON text, but values rpcscan never reads (``params``, ``result``,
  ``error.data``, unknown members) are only checked structurally. For trusted hops.

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
import warnings
from typing import Any, Dict, Iterable, Iterator, Optional, Tuple, Union

from ._rpcscan import Message, Table, __version__, classify, parse, reasons, respond
from . import _rpcscan

__all__ = [
    "InvalidMessage",
    "Message",
    "PairResult",
    "ScanWarning",
    "Table",
    "__version__",
    "classify",
    "pair",
    "parse",
    "read_log",
    "reasons",
    "respond",
    "scan",
    "scan_log",
]


class ScanWarning(UserWarning):
    """A note about an input :func:`read_log` or :func:`pair` read: it looks binary (a NUL
    byte near its start: compressed, UTF-16, not traffic), for instance. The input is
    still scanned; ``warnings.simplefilter("error", rpcscan.ScanWarning)`` makes it an
    error."""


class InvalidMessage(ValueError):
    """A message that is not valid JSON-RPC 2.0 (the rule book, §4; see ``help(rpcscan)``).

    It pickles with every attribute, so it crosses process boundaries
    (``concurrent.futures.ProcessPoolExecutor``, ``multiprocessing``) intact.

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
        """The exact bytes a server answers with (the rule book's §4 spacing)."""
        return self._response

    def __reduce__(self) -> Tuple[Any, ...]:
        args = (str(self), self.reason, self.code, self.offset, self.id_raw, self._response)
        return (type(self), args, self.__dict__)


_BYTES_LIKE = (bytes, bytearray, memoryview)


def _is_buffer(source: Any) -> bool:
    """``source`` has the buffer protocol (``bytes``, ``bytearray``, ``memoryview``,
    ``mmap.mmap``, ``array.array``, NumPy arrays...)."""
    if isinstance(source, _BYTES_LIKE):
        return True
    try:
        memoryview(source).release()
    except TypeError:
        return False
    return True


def read_log(
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
    """Reads a whole log into an Arrow table, one row per message (eagerly: the whole
    input is scanned before it returns).

    ``source`` is a path (``str`` or ``os.PathLike``: NDJSON files are read with positioned
    reads in parallel blocks and scanned on all cores, with the GIL released), any object
    with the buffer protocol (``bytes``, ``bytearray``, ``memoryview``, ``mmap.mmap``,
    ``array.array``...: read where it lies, without a copy, NDJSON on all cores as a file
    is; the buffer is held until the scan ends, so it cannot be resized meanwhile;
    ``bytes`` is scanned with the GIL released, a writable buffer with the GIL held, so that
    no Python thread writes to it meanwhile; a non-contiguous view raises ``TypeError``), or
    an iterable of ``bytes`` chunks concatenated as one stream (a file opened in ``"rb"``
    mode works), or
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

    ``mmap=True`` memory-maps a path instead of reading it (about 4% less CPU time on a
    file in the page cache). **Risk:** if the file is truncated while it is scanned
    (``logrotate``'s ``copytruncate`` does this), touching the vanished pages raises
    ``SIGBUS``, which kills the Python interpreter; no exception can catch it. By default
    (``mmap=False``) a file that shrinks is read up to its new end and ``OSError`` is
    raised, saying where it shrank.

    Columns: ``line`` (NDJSON, else null), ``offset``, ``kind``, ``method``, ``id`` (the
    raw text: ``7``, ``"a"`` with quotes), ``error_code`` (``int64``; null when the code
    does not fit), ``error_code_text`` (the code's exact decimal text, any size),
    ``reason``, ``tool_name`` - the values ``rpcscan classify --json`` prints (it prints
    a code verbatim, as ``error_code_text`` holds it). ``kind`` and ``reason`` are
    dictionary-encoded strings (``int8`` indices: a pandas ``category``, a Polars
    ``Categorical``, a DuckDB ``VARCHAR``); the columns come in chunks, one per block of
    input scanned in parallel.

    Returns a ``pyarrow.Table`` when pyarrow is installed, else an :class:`rpcscan.Table`
    with the Arrow PyCapsule interface (``polars.from_arrow``, DuckDB, nanoarrow...).
    When a table is dropped, its columns' memory is kept for the next read (at most 128 MB
    for each of the four element types), which then does not fault it in again.

    Notes about the input (it looks binary...) are :class:`ScanWarning` warnings.

    >>> t = rpcscan.read_log(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\\n[]\\n')
    >>> t.column("kind").to_pylist()
    ['request', 'invalid']
    """
    kind, source = _source("read_log", source, framing)
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
                "read_log: an Arrow source holds one message per element "
                "(no line_format / json_field)"
            )
        table = _rpcscan.scan_arrow(source, mode, max_message_size)
    else:
        table = _rpcscan.scan_bytes(source, framing, mode, max_message_size, **extract)
    return _arrow(table)


def scan(source: Any, **options: Any) -> Any:
    """Deprecated: the former name of :func:`read_log` (it reads eagerly; in Polars,
    ``scan_*`` means lazy). Warns with ``DeprecationWarning`` and calls ``read_log``."""
    warnings.warn(
        "rpcscan.scan is deprecated: it is rpcscan.read_log (an eager read)",
        DeprecationWarning,
        stacklevel=2,
    )
    return read_log(source, **options)


def scan_log(source: Union[str, "os.PathLike[str]"], **options: Any) -> Any:
    """A log file as a lazy ``polars.LazyFrame`` (:func:`rpcscan.polars.scan_log`; needs
    ``rpcscan[polars]``)."""
    from .polars import scan_log as _scan_log

    return _scan_log(source, **options)


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
    if _is_buffer(source):
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
        f"{function}: source must be a path, an object with the buffer protocol, an iterable "
        f"of bytes or an Arrow array, not {type(source).__name__}"
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

    ``source`` and the reading options are :func:`read_log`'s. Timestamps and direction labels
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
    ``error_code_text`` (the code's exact text, any size), ``latency_ms``, ``progress``, ``cancelled``, ``ending`` (``finished``, ``evicted``,
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
