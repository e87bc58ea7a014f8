"""classify, parse, respond and InvalidMessage through the Python API (docs/spec.md §1-§5)."""

from __future__ import annotations

import array
import concurrent.futures
import decimal
import importlib.metadata
import json
import multiprocessing
import pickle
import re
import sys

import pytest

import rpcscan

KINDS = {"request", "notification", "result", "error"}
SPACED = '{{"jsonrpc": "2.0", "id": {id}, "error": {{"code": {code}, "message": "{text}"}}}}'
TEXT = {-32700: "Parse error", -32600: "Invalid Request", -32601: "Method not found"}


def test_spec_table(spec_rows):
    """Every row of the rule book's table: kind or reason, code, recovered id, offset
    family, and the answer byte for byte; envelope mode agrees on every JSON text."""
    for row in spec_rows:
        msg = bytes.fromhex(row["message_hex"])
        want, code, want_id = row["verdict"], row["code"], row["id"]
        shown = msg[:200]
        if code is None:
            assert want in KINDS
            assert rpcscan.classify(msg) == want, shown
            m = rpcscan.parse(msg)
            assert m.kind == want, shown
            raw = m.id_raw.decode() if m.id_raw is not None else None
            assert raw == want_id, shown
        else:
            assert rpcscan.classify(msg) == "invalid", shown
            with pytest.raises(rpcscan.InvalidMessage) as info:
                rpcscan.parse(msg)
            err = info.value
            assert isinstance(err, ValueError)
            assert (err.reason, err.code) == (want, code), shown
            raw = err.id_raw.decode() if err.id_raw is not None else None
            assert raw == want_id, shown
            assert (err.offset is not None) == (code == -32700), shown
            answer = SPACED.format(id=want_id or "null", code=code, text=TEXT[code])
            assert err.response() == answer.encode(), shown
            assert rpcscan.respond(msg) == answer.encode(), shown
        if code != -32700:
            assert rpcscan.classify(msg, strict=False) == (want if code is None else "invalid")
            if code is not None:
                with pytest.raises(rpcscan.InvalidMessage) as info:
                    rpcscan.parse(msg, strict=False)
                assert info.value.reason == want, shown


def test_every_reason_is_in_the_table(spec_rows):
    seen = {row["verdict"] for row in spec_rows}
    for reason, code in rpcscan.reasons():
        assert code in (-32700, -32600)
        # too_large needs a size limit (scan's max_message_size), empty_batch batch mode.
        assert reason in seen or reason in ("too_large", "empty_batch"), reason


def test_offsets():
    for msg, offset in [(b'{"a":}', 5), (b"\xef\xbb\xbf{}", 0), (b"{} x", 3), (b"  ", 2)]:
        with pytest.raises(rpcscan.InvalidMessage) as info:
            rpcscan.parse(msg)
        assert info.value.offset == offset, msg


def test_ids_above_2_64_are_exact_ints():
    big = 2**64 + 1
    huge = -(10**40) - 7
    for value in (big, huge, 9007199254740993):
        m = rpcscan.parse(f'{{"jsonrpc":"2.0","id":{value},"method":"m"}}'.encode())
        assert type(m.id) is int and m.id == value
        assert m.id_raw == str(value).encode()
    m = rpcscan.parse(b'{"jsonrpc":"2.0","id":1,"error":{"code":-184467440737095516160,"message":"x"}}')
    assert m.error_code == -184467440737095516160


def test_string_and_null_ids():
    m = rpcscan.parse(br'{"jsonrpc":"2.0","id":"a\u0062","method":"n\u00e9","params":[1, 2]}')
    assert (m.id, m.id_raw, m.method) == ("ab", b'"a\\u0062"', "n\u00e9")
    assert m.params == b"[1, 2]" and m.params_json() == [1, 2]
    m = rpcscan.parse(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"x":1}}}')
    assert (m.kind, m.id, m.id_raw) == ("error", None, b"null")
    assert (m.error_code, m.error_message) == (-32700, "Parse error")
    assert m.error_data_json() == {"x": 1} and m.result is None
    m = rpcscan.parse(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    assert (m.kind, m.id, m.id_raw, m.params, m.params_json()) == ("notification", None, None, None, None)
    m = rpcscan.parse(b'{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}')
    assert m.result_json() == {"tools": []}
    # A lone surrogate escape: a Python str can hold it.
    m = rpcscan.parse(br'{"jsonrpc":"2.0","id":"\ud800","method":"m"}')
    assert m.id == "\ud800"


def test_tool_name():
    m = rpcscan.parse('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"météo","arguments":{}}}')
    assert m.tool_name == "météo"
    assert rpcscan.parse(b'{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"x"}}').tool_name is None


def test_str_input_non_ascii():
    text = '{"jsonrpc":"2.0","id":"ключ","method":"工具/call","params":{"emoji":"😀"}}'
    m = rpcscan.parse(text)
    assert (m.kind, m.id, m.method) == ("request", "ключ", "工具/call")
    assert m.params_json() == {"emoji": "😀"}
    assert m.id_raw == '"ключ"'.encode()
    assert rpcscan.classify(text) == "request"
    with pytest.raises(rpcscan.InvalidMessage) as info:
        rpcscan.parse('{"jsonrpc":"2.0","id":"é","method":5}')
    assert info.value.reason == "bad_method" and info.value.id_raw == '"é"'.encode()


def test_buffer_types_without_copy():
    msg = b'{"jsonrpc":"2.0","id":7,"method":"tools/list"}'
    big = bytearray(b"garbage" + msg + b"more garbage")
    view = memoryview(big)[7 : 7 + len(msg)]
    for data in (msg, bytearray(msg), memoryview(msg), view, array.array("B", msg)):
        assert rpcscan.classify(data) == "request"
        assert rpcscan.parse(data).id == 7
    # The slice is read where it lies: edit the underlying buffer and the verdict follows.
    big[7 + msg.index(b"7")] = ord("8")
    assert rpcscan.parse(view).id == 8
    # The scanner holds no export once it returns: with the views gone, the bytearray can
    # be resized again.
    view.release()
    big.extend(b"!")


def test_respond():
    req = b'{"jsonrpc":"2.0","id":"q","method":"resources/list"}'
    assert rpcscan.respond(req) == SPACED.format(id='"q"', code=-32601, text=TEXT[-32601]).encode()
    assert rpcscan.respond(req, supported=["resources/list"]) is None
    assert rpcscan.respond(b'{"jsonrpc":"2.0","id":1,"method":"tools/call"}') is None
    assert rpcscan.respond(b'{"jsonrpc":"2.0","method":"nope"}') is None
    assert rpcscan.respond(b'{"jsonrpc":"2.0","id":1,"result":{}}') is None
    assert rpcscan.respond(b'{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}') is None
    assert rpcscan.respond(b"") == SPACED.format(id="null", code=-32700, text=TEXT[-32700]).encode()
    assert rpcscan.respond(b'{"jsonrpc":"1.0","id":9,"method":"x"}', supported=()) == SPACED.format(
        id="9", code=-32600, text=TEXT[-32600]
    ).encode()


def test_respond_matches_the_cli(cli, tmp_path):
    import pathlib
    import subprocess

    SAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "mcp-traffic.ndjson"
    lines = [line for line in SAMPLE.read_bytes().split(b"\n") if line.strip()]
    out = subprocess.run(
        [cli, "respond", "--supported", "tools/list,tools/call", str(SAMPLE)],
        check=True,
        capture_output=True,
    ).stdout.split(b"\n")[:-1]
    ours = []
    for line in lines:
        answer = rpcscan.respond(line, supported=("tools/list", "tools/call"))
        if answer is not None:
            ours.append(answer)
        elif rpcscan.classify(line) == "request":
            ours.append(b"supported")
    assert ours == out


def test_bad_arguments_raise_type_error():
    for bad in (None, 5, 1.5, ["x"], {"a": 1}, object()):
        with pytest.raises(TypeError):
            rpcscan.classify(bad)
        with pytest.raises(TypeError):
            rpcscan.parse(bad)
        with pytest.raises(TypeError):
            rpcscan.respond(bad)
    with pytest.raises(TypeError):
        rpcscan.respond(b"{}", supported="tools/list")
    with pytest.raises(TypeError):
        rpcscan.respond(b"{}", supported=[1])
    with pytest.raises(TypeError):
        rpcscan.parse(b"{}", strict="yes")
    with pytest.raises(TypeError):
        rpcscan.read_log(42)
    with pytest.raises(TypeError):
        rpcscan.read_log([b"ok", 3])


def invalid_attributes(err):
    return (type(err), str(err), err.args, err.reason, err.code, err.offset, err.id_raw, err.response())


def test_exception_is_printable():
    with pytest.raises(ValueError) as info:
        rpcscan.parse(b"[]")
    err = info.value
    assert str(err) and err.reason == "batch" and err.code == -32600
    assert err.offset is None and err.id_raw is None
    assert json.loads(err.response()) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "Invalid Request"},
    }


def test_exception_pickles_with_every_attribute():
    for msg in (b"[]", b'{"a":}', b'{"jsonrpc":"2.0","id":"q","method":5}'):
        with pytest.raises(rpcscan.InvalidMessage) as info:
            rpcscan.parse(msg)
        err = info.value
        err.extra = "kept"
        for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
            back = pickle.loads(pickle.dumps(err, protocol))
            assert invalid_attributes(back) == invalid_attributes(err)
            assert back.extra == "kept"


def test_exception_travels_through_a_process_pool():
    # A real pool with worker processes: the exception is pickled in the worker and
    # raised again here, instead of ending in BrokenProcessPool.
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        future = pool.submit(rpcscan.parse, b"[]")
        with pytest.raises(rpcscan.InvalidMessage) as info:
            future.result(timeout=120)
        message = pool.submit(rpcscan.parse, MESSAGE).result(timeout=120)
    with pytest.raises(rpcscan.InvalidMessage) as here:
        rpcscan.parse(b"[]")
    assert invalid_attributes(info.value) == invalid_attributes(here.value)
    assert message == rpcscan.parse(MESSAGE)


MESSAGE = b'{"jsonrpc":"2.0","id":18446744073709551617,"method":"tools/call","params":{"name":"x"}}'


def test_message_equality_and_pickling():
    messages = [
        rpcscan.parse(MESSAGE),
        rpcscan.parse(b'{"jsonrpc":"2.0","id":"a","result":{"x":[1]}}'),
        rpcscan.parse(b'{"jsonrpc":"2.0","id":null,"error":{"code":-7,"message":"m","data":2}}'),
        rpcscan.parse(b'{"jsonrpc":"2.0","method":"notifications/initialized"}'),
    ]
    for m in messages:
        for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
            back = pickle.loads(pickle.dumps(m, protocol))
            assert back == m and hash(back) == hash(m) and back is not m
            assert (back.kind, back.id, back.id_raw, back.method, back.tool_name) == (
                m.kind, m.id, m.id_raw, m.method, m.tool_name
            )
            assert (back.params, back.result, back.error_data, back.error_code, back.error_message) == (
                m.params, m.result, m.error_data, m.error_code, m.error_message
            )
    assert messages[0] == rpcscan.parse(MESSAGE) and len(set(messages)) == len(messages)
    assert messages[0] != messages[1] and messages[0] != "request"
    # Value equality: the same members, even from different bytes.
    assert rpcscan.parse(b'{"jsonrpc":"2.0","id":1,"method":"m"}') == rpcscan.parse(
        b'{ "method":"m", "id":1, "jsonrpc":"2.0" }'
    )
    assert rpcscan.parse(b'{"jsonrpc":"2.0","id":1,"method":"m"}') != rpcscan.parse(
        b'{"jsonrpc":"2.0","id":"1","method":"m"}'
    )
    with pytest.raises(ValueError):
        rpcscan.Message("invalid")


def test_numbers_beyond_the_int_digit_limit():
    """Ids and codes longer than Python's integer string conversion limit come back exact
    (a decimal.Decimal), never as a ValueError from int()."""
    limit = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0
    digits = "9" * max(limit, 4300) + "1"
    request = f'{{"jsonrpc":"2.0","id":{digits},"method":"ping"}}'.encode()
    error = f'{{"jsonrpc":"2.0","id":1,"error":{{"code":-{digits},"message":"m"}}}}'.encode()
    assert rpcscan.classify(request) == "request"
    m = rpcscan.parse(request)
    if limit:
        assert isinstance(m.id, decimal.Decimal) and m.id == decimal.Decimal(digits)
        assert m.id == m.id.to_integral_value() and str(m.id) == digits
    assert m.id_raw == digits.encode()
    e = rpcscan.parse(error)
    assert str(e.error_code) == "-" + digits
    assert pickle.loads(pickle.dumps(m)) == m
    # With the limit lifted, the same ids are ints.
    if limit:
        sys.set_int_max_str_digits(0)
        try:
            m = rpcscan.parse(request)
            assert type(m.id) is int and m.id == int(digits)
            assert rpcscan.parse(error).error_code == -int(digits)
        finally:
            sys.set_int_max_str_digits(limit)
    # An id just at the limit is an int, and equal (and hash-equal) to its Decimal.
    at_limit = "7" * (limit or 4300)
    m = rpcscan.parse(f'{{"jsonrpc":"2.0","id":{at_limit},"method":"ping"}}'.encode())
    assert type(m.id) is int and m.id == decimal.Decimal(at_limit)
    assert hash(m.id) == hash(decimal.Decimal(at_limit))


def test_version_and_docs_stand_alone():
    assert rpcscan.__version__ == importlib.metadata.version("rpcscan")
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", rpcscan.__version__)
    docs = [rpcscan.__doc__]
    for name in rpcscan.__all__:
        obj = getattr(rpcscan, name)
        docs.append(getattr(obj, "__doc__", None) or "")
        for member in vars(obj).values() if isinstance(obj, type) else ():
            docs.append(getattr(member, "__doc__", None) or "")
    text = "\n".join(d for d in docs if d)
    # docs/spec.md is not in the wheel: the docs point at a URL and summarise the rules.
    assert "docs/spec.md" not in text.replace("rpcscan/blob/main/docs/spec.md", "")
    assert "https://github.com/rpcscan/rpcscan/blob/main/docs/spec.md" in rpcscan.__doc__
    # No rustdoc intra-doc links ([`Message`]).
    assert not re.search(r"\[`[^`]+`\](?!\()", text), re.findall(r"\[`[^`]+`\]", text)


def test_docstring_examples():
    """The examples in the docstrings (the package's and the Rust functions') run as
    written, against the installed package."""
    import doctest

    from rpcscan import _rpcscan

    failures, tries = doctest.testmod(rpcscan, extraglobs={"rpcscan": rpcscan})
    assert failures == 0 and tries > 0
    for function in (_rpcscan.classify, _rpcscan.parse, _rpcscan.respond):
        runner = doctest.DocTestRunner()
        for test in doctest.DocTestFinder().find(function, globs={"rpcscan": rpcscan}):
            runner.run(test)
        assert runner.failures == 0 and runner.tries > 0, function.__name__
