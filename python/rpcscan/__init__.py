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

import os
from typing import Any, Iterable, Optional, Union

from ._rpcscan import Message, Table, classify, parse, reasons, respond
from . import _rpcscan

__all__ = [
    "InvalidMessage",
    "Message",
    "Table",
    "classify",
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
) -> Any:
    """Scans a whole log into an Arrow table, one row per message.

    ``source`` is a path (``str`` or ``os.PathLike``: NDJSON files are memory-mapped and
    scanned on all cores, with the GIL released), bytes-like data, or an iterable of
    ``bytes`` chunks concatenated as one stream (a file opened in ``"rb"`` mode works), or
    an Arrow array / chunked array of string, large string, string view, binary or binary
    view with one message per element (through the Arrow C data interface: pyarrow,
    Polars, DuckDB and nanoarrow objects; ``line`` is then the element's 1-based position,
    null elements give no row).
    ``framing`` is ``"auto"``, ``"ndjson"``, ``"content-length"``, ``"sse"`` or
    ``"json-seq"``; ``mode`` is ``"strict"`` or ``"envelope"``.

    Columns: ``line`` (NDJSON, else null), ``offset``, ``kind``, ``method``, ``id`` (the
    raw text: ``7``, ``"a"`` with quotes), ``error_code``, ``reason``, ``tool_name`` - the
    values ``rpcscan classify --json`` prints.

    Returns a ``pyarrow.Table`` when pyarrow is installed, else an :class:`rpcscan.Table`
    with the Arrow PyCapsule interface (``polars.from_arrow``, DuckDB, nanoarrow...).

    >>> t = rpcscan.scan(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\\n[]\\n')
    >>> t.column("kind").to_pylist()
    ['request', 'invalid']
    """
    if isinstance(source, (str, os.PathLike)):
        table = _rpcscan.scan_path(
            os.fspath(source), framing, mode, max_message_size
        )
    elif hasattr(source, "__arrow_c_stream__") or hasattr(source, "__arrow_c_array__"):
        if framing not in ("auto", "ndjson"):
            raise ValueError("scan: an Arrow source holds one message per element (framing='auto')")
        table = _rpcscan.scan_arrow(source, mode, max_message_size)
    elif isinstance(source, _BYTES_LIKE):
        table = _rpcscan.scan_bytes(source, framing, mode, max_message_size)
    elif hasattr(source, "__iter__"):
        chunks = []
        for chunk in source:
            if not isinstance(chunk, _BYTES_LIKE):
                raise TypeError(
                    f"scan: an iterable source must yield bytes, not {type(chunk).__name__}"
                )
            chunks.append(chunk)
        table = _rpcscan.scan_bytes(b"".join(chunks), framing, mode, max_message_size)
    else:
        raise TypeError(
            "scan: source must be a path, bytes-like, or an iterable of bytes, "
            f"not {type(source).__name__}"
        )
    try:
        import pyarrow
    except ImportError:
        return table
    return pyarrow.table(table)
