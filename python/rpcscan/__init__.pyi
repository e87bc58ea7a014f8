"""Type stubs for rpcscan: classify, parse, answer and scan JSON-RPC 2.0 / MCP messages."""

import datetime
import decimal
import mmap
import os
from typing import Any, Dict, Iterable, Iterator, Literal, Optional, Protocol, Tuple, Union

Data = Union[bytes, bytearray, memoryview, mmap.mmap, str, Any]
"""``str`` or any object with the buffer protocol (``bytes``, ``bytearray``, ``memoryview``,
``mmap.mmap``, ``array.array``...), read in place."""
Buffer = Union[bytes, bytearray, memoryview, mmap.mmap]
Integer = Union[int, decimal.Decimal]
"""An exact integer: an ``int``, or a ``decimal.Decimal`` of the same value when it has more
digits than ``sys.get_int_max_str_digits()`` allows converting."""
Kind = Literal["request", "notification", "result", "error", "invalid"]
Framing = Literal["auto", "ndjson", "content-length", "sse", "json-seq"]
Mode = Literal["strict", "envelope"]

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

__version__: str
"""The package's version (the extension's Cargo version)."""

class ScanWarning(UserWarning):
    """A note about an input :func:`read_log` or :func:`pair` read (it looks binary...)."""

class InvalidMessage(ValueError):
    """A message that is not valid JSON-RPC 2.0 (the rule book, §4; see ``help(rpcscan)``).
    It pickles with every attribute.

    >>> try:
    ...     rpcscan.parse(b'{"a":}')
    ... except rpcscan.InvalidMessage as e:
    ...     print(e.reason, e.code, e.offset)
    syntax -32700 5
    """

    reason: str
    """The reason's name: ``"syntax"``, ``"bad_id"``, ... (:func:`reasons`)."""
    code: int
    """-32700 (Parse error) or -32600 (Invalid Request)."""
    offset: Optional[int]
    """The first offending byte, for the -32700 family; else ``None``."""
    id_raw: Optional[bytes]
    """The recovered id's exact bytes, or ``None`` (the answer carries ``null``)."""
    def __init__(
        self,
        message: str,
        reason: str,
        code: int,
        offset: Optional[int],
        id_raw: Optional[bytes],
        response: bytes,
    ) -> None: ...
    def response(self) -> bytes:
        """The exact bytes a server answers with.

        >>> e.response()
        b'{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}'
        """

class Message:
    """A valid message: its kind and the members a router reads.

    >>> m = rpcscan.parse(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}')
    >>> m.kind, m.id, m.method, m.tool_name, m.params
    ('request', 1, 'tools/call', 'x', b'{"name":"x"}')

    Messages compare (and hash) by value, field by field, and pickle.
    """

    def __init__(
        self,
        kind: Literal["request", "notification", "result", "error"],
        id: Union[Integer, str, None] = None,
        id_raw: Optional[bytes] = None,
        method: Optional[str] = None,
        tool_name: Optional[str] = None,
        params: Optional[bytes] = None,
        result: Optional[bytes] = None,
        error_data: Optional[bytes] = None,
        error_code: Optional[Integer] = None,
        error_message: Optional[str] = None,
    ) -> None: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

    @property
    def kind(self) -> Literal["request", "notification", "result", "error"]: ...
    @property
    def id(self) -> Union[Integer, str, None]:
        """``int`` of any size (exact; a ``decimal.Decimal`` of the same value past
        ``sys.get_int_max_str_digits()``), ``str``, or ``None`` (no id, or ``"id": null``)."""
    @property
    def id_raw(self) -> Optional[bytes]:
        """The id's bytes exactly as sent (a string id with its quotes); ``None`` without one."""
    @property
    def method(self) -> Optional[str]: ...
    @property
    def tool_name(self) -> Optional[str]:
        """``params.name`` of a ``tools/call`` request."""
    @property
    def params(self) -> Optional[bytes]:
        """``params`` as raw JSON bytes."""
    @property
    def result(self) -> Optional[bytes]:
        """``result`` as raw JSON bytes."""
    @property
    def error_data(self) -> Optional[bytes]:
        """``error.data`` as raw JSON bytes."""
    @property
    def error_code(self) -> Optional[Integer]: ...
    @property
    def error_message(self) -> Optional[str]: ...
    def params_json(self) -> Any:
        """``params`` decoded with ``json.loads`` (``None`` without params)."""
    def result_json(self) -> Any:
        """``result`` decoded with ``json.loads``."""
    def error_data_json(self) -> Any:
        """``error.data`` decoded with ``json.loads``."""

class Table:
    """The result of :func:`read_log` without pyarrow: one Arrow record batch behind the Arrow
    PyCapsule interface (``polars.DataFrame(t)``, ``pyarrow.table(t)``, DuckDB...)."""

    @property
    def num_rows(self) -> int: ...
    @property
    def column_names(self) -> list[str]: ...
    def __len__(self) -> int: ...
    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> object: ...

def classify(data: Data, strict: bool = True) -> Kind:
    """The kind of one message.

    >>> rpcscan.classify(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
    'request'
    >>> rpcscan.classify(b'{"jsonrpc":"2.0","id":null,"method":"ping"}')
    'invalid'
    """

def parse(data: Data, strict: bool = True) -> Message:
    """Scans one message; raises :class:`InvalidMessage` for an invalid one.
    ``strict=False`` selects envelope mode (the rule book, §6).

    >>> rpcscan.parse(b'{"jsonrpc":"2.0","id":18446744073709551617,"method":"ping"}').id
    18446744073709551617
    """

def respond(
    data: Data, supported: Optional[Iterable[str]] = ..., strict: bool = True
) -> Optional[bytes]:
    """What a server answers, as ``rpcscan respond`` prints it: the -32700 / -32600
    response for an invalid message, -32601 for a request whose method is not in
    ``supported`` (default ``("tools/list", "tools/call")``), else ``None``.

    >>> rpcscan.respond(b'{"jsonrpc":"2.0","id":7,"method":"nope"}')
    b'{"jsonrpc": "2.0", "id": 7, "error": {"code": -32601, "message": "Method not found"}}'
    """

def reasons() -> list[Tuple[str, int]]:
    """Every reason name of the rule book's §4 with its code.

    >>> rpcscan.reasons()[0]
    ('invalid_utf8', -32700)
    """

class ArrowSource(Protocol):
    """Anything with the Arrow PyCapsule interface (a stream or an array)."""

    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> object: ...

def read_log(
    source: Union[str, "os.PathLike[str]", Buffer, Iterable[bytes], ArrowSource, Any],
    *,
    framing: Framing = "auto",
    mode: Mode = "strict",
    max_message_size: int = 16777216,
    line_format: Optional[str] = None,
    json_field: Optional[str] = None,
    ts_field: Optional[str] = None,
    dir_field: Optional[str] = None,
    mmap: bool = False,
) -> Any:
    """A whole log read eagerly into an Arrow table, one row per message: columns
    ``line``, ``offset``, ``kind``, ``method``, ``id``, ``error_code`` (int64, null when
    the code does not fit), ``error_code_text`` (the code's exact decimal text),
    ``reason``, ``tool_name`` (the values of ``rpcscan classify --json``; ``kind`` and
    ``reason`` dictionary-encoded, the columns in chunks, one per block of input).
    ``source``: a path, any object with the buffer protocol (read in place, in parallel),
    an iterable of byte chunks, or an Arrow array of strings / binary with one message per
    element. A ``pyarrow.Table`` when pyarrow is installed, else a :class:`Table`. Notes
    about the input are :class:`ScanWarning` warnings.

    Messages inside log lines, as the CLI reads them: ``line_format`` (a regular
    expression with a ``msg`` group) or ``json_field`` (a dotted path in JSON records);
    ``rpcscan proxy --log`` files are recognised on their own.

    Files are read with positioned reads: one truncated while it is scanned raises
    ``OSError``. ``mmap=True`` maps the file instead (slightly less CPU time), at a risk:
    a file truncated while mapped raises ``SIGBUS``, which kills the interpreter.

    >>> t = rpcscan.read_log("traffic.ndjson")
    >>> t.group_by("kind").aggregate([("offset", "count")])
    """

def scan(source: Any, **options: Any) -> Any:
    """Deprecated alias of :func:`read_log` (warns with ``DeprecationWarning``)."""

class PairResult:
    """What :func:`pair` returns; ``table, summary = rpcscan.pair(path)`` unpacks it, and
    it has its table's Arrow PyCapsule interface (``polars.DataFrame(result)``, DuckDB)."""

    table: Any
    """One row per event: a ``pyarrow.Table`` when pyarrow is installed, else a
    :class:`Table`."""
    summary: Dict[str, Any]
    """The counts of ``rpcscan pair --json``'s summary line (``pairs``, ``unanswered``,
    ``evicted``, ``timed_out``, ``orphans``, ``duplicates``, ``cancelled``,
    ``null_id_errors``, ``stray_notifications``, ``directions``, ``undirected``), then
    ``methods`` and ``tools`` (``{name: {"count", "errors": {code: n}, "p50_ms", "p90_ms",
    "p99_ms", "max_ms"}}``), ``unanswered_methods`` (``{method: {"count",
    "first_lines"}}``) and ``first_lines`` (per anomaly, the first five lines)."""
    def __init__(self, table: Any, summary: Dict[str, Any]) -> None: ...
    def __iter__(self) -> Iterator[Any]: ...
    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> object: ...

def pair(
    source: Union[str, "os.PathLike[str]", Buffer, Iterable[bytes], ArrowSource, Any],
    *,
    framing: Framing = "auto",
    mode: Mode = "strict",
    max_message_size: int = 16777216,
    line_format: Optional[str] = None,
    json_field: Optional[str] = None,
    ts_field: Optional[str] = None,
    dir_field: Optional[str] = None,
    max_in_flight: int = 1000000,
    timeout: Union[float, datetime.timedelta, None] = None,
) -> PairResult:
    """Every response matched to the request it answers, by ``rpcscan pair``'s rules: one
    row per pair and per anomaly, in the order they settle, with the members of
    ``rpcscan pair --json`` (``event``, ``request_line``, ``request_offset``,
    ``response_line``, ``response_offset``, ``id`` (raw text), ``method``, ``tool``,
    ``outcome``, ``error_code``, ``error_code_text``, ``latency_ms``, ``progress``, ``cancelled``, ``ending``,
    ``earlier_line``, ``earlier_offset``; ``event``, ``outcome`` and ``ending`` are
    dictionary-encoded), and the summary as a ``dict``. Timestamps and directions come from
    log lines (``line_format`` groups ``ts`` / ``dir``, ``ts_field`` / ``dir_field`` with
    ``json_field``, proxy logs); ``timeout`` is in seconds (or a ``timedelta``).

    >>> table, summary = rpcscan.pair("traffic.ndjson")
    >>> table.filter(pc.field("event") == "orphan")
    >>> summary["pairs"], summary["methods"]["tools/call"]["p99_ms"]
    """

def scan_log(source: Union[str, "os.PathLike[str]"], **options: Any) -> Any:
    """A log file as a lazy ``polars.LazyFrame`` with :func:`scan`'s columns
    (``rpcscan.polars.scan_log``; needs ``rpcscan[polars]``)."""
