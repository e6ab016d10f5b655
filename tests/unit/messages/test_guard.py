"""The output guard: credential validation and callback containment (WIRE-013, WIRE-015)."""

from __future__ import annotations

import ctypes
import gc
import json
import os
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentx.messages.encode import EncodeError, encode_record
from agentx.messages.frozen import FrozenDict, freeze
from agentx.messages.guard import (
    VALIDATOR_IMMUTABLE,
    VALIDATOR_INSTALLED,
    VALIDATOR_MISSING,
    WRITE_REENTERED,
    CredentialValidator,
    FailureKind,
    GuardConfigError,
    OutputFailure,
    OutputGuard,
)
from agentx.messages.raw_json import RawJSON

TIMEOUT = 10.0

RESULT = freeze(
    {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "num_turns": 1,
        "result": "done",
        "session_id": "s1",
        "uuid": "u1",
    }
)
SAFE = freeze({"type": "keep_alive"})


def new_guard(write: Callable[[bytes], Any]) -> OutputGuard:
    return OutputGuard(write, state_lock=threading.Lock(), write_lock=threading.RLock())


def run_bounded(call: Callable[[], object]) -> None:
    """Run ``call`` on a daemon thread; a deadlock fails the test instead of hanging it."""
    errors: list[BaseException] = []
    done = threading.Event()

    def body() -> None:
        try:
            call()
        except BaseException as exc:
            errors.append(exc)
        finally:
            done.set()

    threading.Thread(target=body, daemon=True).start()
    assert done.wait(TIMEOUT), "deadlock: the guard call did not finish"
    if errors:
        raise errors[0]


TOUCHED = "the guard touched a callback-owned object"


class _HostileMixin:
    """Every hook a careless handler might call on a callback's error fails loudly.

    Python's ``error``, ``Is`` and ``Unwrap`` are ``__str__``/``__repr__``,
    ``__eq__``/``__hash__`` and ``args``: none may be touched (WIRE-015).
    """

    def __str__(self) -> str:
        raise AssertionError(TOUCHED)

    def __repr__(self) -> str:
        raise AssertionError(TOUCHED)

    def __eq__(self, other: object) -> bool:
        raise AssertionError(TOUCHED)

    def __hash__(self) -> int:
        raise AssertionError(TOUCHED)

    def __bool__(self) -> bool:
        raise AssertionError(TOUCHED)

    @property
    def args(self) -> tuple[object, ...]:
        raise AssertionError(TOUCHED)

    @args.setter
    def args(self, _value: tuple[object, ...]) -> None:
        raise AssertionError(TOUCHED)


class _Hostile(_HostileMixin, Exception):
    """A hostile ordinary error."""


class _HostileBase(_HostileMixin, BaseException):
    """A hostile error outside the ``Exception`` hierarchy."""


class _HostileValue(_HostileMixin):
    """A hostile return value: its truth, equality and index hooks fail loudly."""

    def __index__(self) -> int:
        raise AssertionError(TOUCHED)


class _PipeSubclass(BrokenPipeError):
    """Not a trusted leaf: classification is by exact type identity."""


# ---------------------------------------------------------------- the validator


@pytest.mark.parametrize(
    ("literals", "frame", "safe"),
    [
        pytest.param(["sk-1"], b'{"k":"sk-1"}\n', False, id="raw-value"),
        pytest.param(["sk-1"], b'{"sk-1":0}\n', False, id="raw-member-name"),
        pytest.param(['","'], b'{"a":"x","b":"y"}\n', False, id="field-separator"),
        pytest.param(['"}\n'], b'{"a":"x"}\n', False, id="suffix-plus-newline"),
        pytest.param(["\n"], b"{}\n", False, id="newline-alone"),
        pytest.param(["sk-1"], b'{"k":"\\u0073k-1"}\n', False, id="escaped-value"),
        pytest.param(["sk-1"], b'{"\\u0073k-1":0}\n', False, id="escaped-member-name"),
        pytest.param(["sk/1"], b'{"k":"sk\\/1"}\n', False, id="escaped-solidus"),
        pytest.param(['a"b'], b'{"k":"a\\"b"}\n', False, id="encoder-spelling-quote"),
        pytest.param(["caf\u00e9"], b'{"k":"caf\\u00e9"}\n', False, id="ascii-escaped-non-ascii"),
        pytest.param(["x\u2028y"], b'{"k":"x\\u2028y"}\n', False, id="escaped-separator"),
        pytest.param(["\ud800"], b'{"k":"\\ud800"}\n', False, id="lone-surrogate-escape"),
        pytest.param(
            ["secret"], b'{"k":"\\u0073ecret","k":"safe"}\n', False, id="duplicate-earlier-escaped"
        ),
        pytest.param(
            ["secret"], b'{"k":"safe","k":"\\u0073ecret"}\n', False, id="duplicate-later-escaped"
        ),
        pytest.param(["x"], b'{"a":1}\n', True, id="tiny-literal-absent"),
        pytest.param(["t"], b'{"type":"keep_alive"}\n', False, id="tiny-literal-fails-closed"),
        pytest.param(["secret"], b'{"k":"s\\u0065cre","t":"t"}\n', True, id="escaped-but-safe"),
        pytest.param(["sk-1"], b'{"k":"sk-","v":"1"}\n', True, id="split-across-values"),
        pytest.param([""], b'{"a":""}\n', True, id="empty-literal-ignored"),
        pytest.param([], b'{"a":"anything"}\n', True, id="no-literals"),
    ],
)
def test_credential_validator(literals: list[str], frame: bytes, safe: bool) -> None:
    assert CredentialValidator(literals).check(frame) is safe


@pytest.mark.parametrize(("inner", "safe"), [("\\u0073ecret", False), ("s\\u0065cre", True)])
def test_validator_decodes_strings_at_any_depth(inner: str, safe: bool) -> None:
    """Deeper than the stdlib decoder's recursion limit, escapes are still decoded."""
    depth = 5000
    frame = b"[" * depth + f'"{inner}"'.encode() + b"]" * depth + b"\n"
    assert CredentialValidator(["secret"]).check(frame) is safe


@given(
    secret=st.text(min_size=1, max_size=12),
    prefix=st.text(max_size=6),
    suffix=st.text(max_size=6),
    where=st.sampled_from(["value", "member-name", "raw-ascii-escaped", "array-item"]),
)
def test_any_embedded_literal_is_found(secret: str, prefix: str, suffix: str, where: str) -> None:
    """Whatever the characters (quotes, controls, separators, non-ASCII), every spelling is seen."""
    text = prefix + secret + suffix
    records: dict[str, dict[str, Any]] = {
        "value": {"type": "x", "v": text},
        "member-name": {text: 1},
        "raw-ascii-escaped": {"raw": RawJSON(text=json.dumps({"v": text}, ensure_ascii=True))},
        "array-item": {"items": ("a", text, "b")},
    }
    assert CredentialValidator([secret]).check(encode_record(records[where])) is False


def test_validator_never_shows_its_literals() -> None:
    validator = CredentialValidator(["sk-live-1", "sk-live-2", "sk-live-1", ""])
    assert len(validator) == 2
    assert "sk-live" not in repr(validator)
    assert "sk-live" not in str(validator)


# ---------------------------------------------------------------- scenario 17


def _dup_payload() -> dict[str, Any]:
    return {**RESULT, "structured_output": RawJSON(text='{"k":"\\u0073ecret","k":"safe"}')}


def _strings(value: Any) -> list[str]:
    """Every member name and string a last-member-wins decoder sees."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [*value, *(s for item in value.values() for s in _strings(item))]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


@pytest.mark.parametrize(
    ("literal", "record", "in_bytes_without_newline"),
    [
        pytest.param('","', RESULT, True, id="separator-between-safe-fields"),
        pytest.param('":"', RESULT, True, id="member-separator"),
        pytest.param('u1"}\n', RESULT, False, id="safe-suffix-plus-newline"),
        pytest.param("secret", _dup_payload(), False, id="duplicate-earlier-escaped-member"),
    ],
)
def test_scenario_17_rejected_before_any_byte(
    literal: str, record: dict[str, Any], in_bytes_without_newline: bool
) -> None:
    frame = encode_record(record)
    # Each case hides the literal from a field-by-field check, and the last two
    # from a scan of the bytes before the newline.
    assert all(literal not in text for text in _strings(json.loads(frame)))
    assert (literal.encode() in frame[:-1]) is in_bytes_without_newline
    sink: list[bytes] = []
    checks: list[bytes] = []
    validator = CredentialValidator([literal])

    def counting(candidate: bytes) -> bool:
        checks.append(candidate)
        return validator.check(candidate)

    guard = new_guard(sink.append)
    guard.install_validator(counting)

    with pytest.raises(OutputFailure) as first:
        guard.write_record(record)
    with pytest.raises(OutputFailure) as later:
        guard.write_record(SAFE)

    assert checks == [frame]
    assert sink == []
    assert first.value.kind is later.value.kind is FailureKind.CREDENTIAL
    assert str(first.value) == str(later.value)
    assert str(first.value) == "output encoder failed: record rejected by credential validator"
    assert literal not in str(first.value)


@pytest.mark.parametrize(
    "validator",
    [
        pytest.param(None, id="none"),
        pytest.param(CredentialValidator([]), id="no-literals"),
        pytest.param(CredentialValidator(["", ""]), id="only-empty-literals"),
        pytest.param(CredentialValidator(["sk-absent"]), id="credentials-not-present"),
    ],
)
def test_credential_free_output_is_plain_fifo_ndjson(validator: CredentialValidator | None) -> None:
    records = [
        RESULT,
        freeze({"type": "assistant", "message": {"content": [{"text": "a\u2028b/c"}]}}),
        {"type": "user", "uuid": "u2", "content": ("x", FrozenDict(y=None))},
        SAFE,
    ]
    sink: list[bytes] = []
    guard = new_guard(sink.append)
    guard.install_validator(validator)

    for record in records:
        guard.write_record(record)

    ordinary = [
        json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        .replace("\u2028", "\\u2028")
        .encode()
        + b"\n"
        for record in records
    ]
    assert sink == [encode_record(record) for record in records] == ordinary


# ---------------------------------------------------------------- scenario 18


def _ok(_frame: bytes) -> bool:
    return True


def _count(frame: bytes) -> int:
    return len(frame)


def _raise(error: BaseException) -> Callable[[bytes], NoReturn]:
    def callback(_frame: bytes) -> NoReturn:
        raise error

    return callback


def _raise_new(kind: type[BaseException], refs: list[weakref.ref[BaseException]]) -> Any:
    def callback(_frame: bytes) -> NoReturn:
        error = kind()
        if "__weakref__" in dir(kind):  # the hostile test classes; builtins have no weakrefs
            refs.append(weakref.ref(error))
        raise error

    return callback


@pytest.mark.parametrize(
    ("verdict", "write", "kind"),
    [
        pytest.param(lambda _f: False, _count, FailureKind.CREDENTIAL, id="validator-false"),
        pytest.param(lambda _f: 1, _count, FailureKind.CREDENTIAL, id="validator-truthy-not-true"),
        pytest.param(
            lambda _f: _HostileValue(),
            _count,
            FailureKind.CREDENTIAL,
            id="validator-hostile-verdict",
        ),
        pytest.param(_Hostile, _count, FailureKind.VALIDATOR, id="validator-raises-hostile"),
        pytest.param(
            _HostileBase, _count, FailureKind.VALIDATOR, id="validator-raises-hostile-base"
        ),
        pytest.param(
            KeyboardInterrupt, _count, FailureKind.VALIDATOR, id="validator-keyboard-interrupt"
        ),
        pytest.param(_ok, BrokenPipeError, FailureKind.BROKEN_PIPE, id="writer-broken-pipe"),
        pytest.param(_ok, _PipeSubclass, FailureKind.WRITER, id="writer-broken-pipe-subclass"),
        pytest.param(_ok, ConnectionResetError, FailureKind.WRITER, id="writer-connection-reset"),
        pytest.param(_ok, _Hostile, FailureKind.WRITER, id="writer-raises-hostile"),
        pytest.param(_ok, _HostileBase, FailureKind.WRITER, id="writer-raises-hostile-base"),
        pytest.param(_ok, lambda f: len(f) - 1, FailureKind.SHORT_WRITE, id="writer-short"),
        pytest.param(_ok, lambda f: len(f) + 1, FailureKind.SHORT_WRITE, id="writer-overlong"),
        pytest.param(_ok, lambda _f: 0, FailureKind.SHORT_WRITE, id="writer-zero"),
        pytest.param(_ok, lambda _f: True, FailureKind.SHORT_WRITE, id="writer-bool"),
        pytest.param(
            _ok, lambda _f: _HostileValue(), FailureKind.SHORT_WRITE, id="writer-hostile-count"
        ),
    ],
)
def test_scenario_18_one_fixed_latched_failure(verdict: Any, write: Any, kind: FailureKind) -> None:
    refs: list[weakref.ref[BaseException]] = []
    if isinstance(verdict, type):
        verdict = _raise_new(verdict, refs)
    if isinstance(write, type):
        write = _raise_new(write, refs)
    calls: list[str] = []

    def validator(frame: bytes) -> bool:
        calls.append("validate")
        result: bool = verdict(frame)
        return result

    def writer(frame: bytes) -> int | None:
        calls.append("write")
        result: int | None = write(frame)
        return result

    guard = new_guard(writer)
    guard.install_validator(validator)

    failures: list[OutputFailure] = []
    for record in (RESULT, SAFE, {"x": float("nan")}):
        with pytest.raises(OutputFailure) as caught:
            guard.write_record(record)
        failures.append(caught.value)
    calls_after_first = calls.copy()

    assert calls_after_first == (
        ["validate"] if kind in _VALIDATOR_KINDS else ["validate", "write"]
    )
    assert {failure.kind for failure in failures} == {kind}
    assert len({str(failure) for failure in failures}) == 1
    for failure in failures:
        assert failure.__cause__ is None
        assert failure.__context__ is None
    assert guard.failure is kind
    with pytest.raises(GuardConfigError, match=f"^{VALIDATOR_IMMUTABLE}$"):
        guard.install_validator(None)
    gc.collect()
    assert all(ref() is None for ref in refs), "the guard kept a callback-owned error alive"


_VALIDATOR_KINDS = {FailureKind.CREDENTIAL, FailureKind.VALIDATOR}


@pytest.mark.parametrize("full_count", [False, True], ids=["returns-none", "returns-full-count"])
def test_successful_write_is_byte_exact(full_count: bool) -> None:
    sink: list[bytes] = []

    def writer(frame: bytes) -> int | None:
        sink.append(frame)
        return len(frame) if full_count else None

    guard = new_guard(writer)
    guard.install_validator(CredentialValidator(["sk-absent"]))
    guard.write_record(RESULT)
    guard.write_record(SAFE)

    assert sink == [encode_record(RESULT), encode_record(SAFE)]
    assert guard.failure is None


@pytest.mark.parametrize("where", ["validator", "writer"])
def test_reentrant_configuration_gets_normal_rejection(where: str) -> None:
    seen: list[object] = []
    sink: list[bytes] = []
    guard: OutputGuard

    def reenter() -> None:
        seen.append((guard.started, guard.failure))
        try:
            guard.install_validator(None)
        except GuardConfigError as error:
            seen.append(str(error))
        try:
            guard.write_record(SAFE)
        except GuardConfigError as error:
            seen.append(str(error))

    def validator(_frame: bytes) -> bool:
        if where == "validator":
            reenter()
        return True

    def writer(frame: bytes) -> None:
        if where == "writer":
            reenter()
        sink.append(frame)

    guard = new_guard(writer)
    guard.install_validator(validator)
    run_bounded(lambda: guard.write_record(RESULT))

    assert seen == [(True, None), VALIDATOR_IMMUTABLE, WRITE_REENTERED]
    assert sink == [encode_record(RESULT)]
    assert guard.failure is None


@pytest.mark.parametrize("where", ["validator", "writer"])
def test_other_threads_inspect_state_while_a_callback_runs(where: str) -> None:
    """Callbacks run outside the state lock: a second thread is never held up by them."""
    observed: list[object] = []
    guard: OutputGuard

    def inspect_elsewhere() -> None:
        def body() -> None:
            observed.append(guard.failure)
            try:
                guard.install_validator(None)
            except GuardConfigError as error:
                observed.append(str(error))

        other = threading.Thread(target=body, daemon=True)
        other.start()
        other.join(TIMEOUT)
        observed.append(other.is_alive())

    def validator(_frame: bytes) -> bool:
        if where == "validator":
            inspect_elsewhere()
        return True

    def writer(_frame: bytes) -> None:
        if where == "writer":
            inspect_elsewhere()

    guard = new_guard(writer)
    guard.install_validator(validator)
    run_bounded(lambda: guard.write_record(RESULT))

    assert observed == [None, VALIDATOR_IMMUTABLE, False]


def test_validator_cannot_mutate_the_written_bytes() -> None:
    expected = encode_record(RESULT)
    handed: list[bytes] = []
    sink: list[bytes] = []

    def vandal(frame: bytes) -> bool:
        address = ctypes.cast(ctypes.c_char_p(frame), ctypes.c_void_p).value
        assert address is not None
        ctypes.memset(address, ord("X"), len(frame))
        handed.append(frame)
        return True

    guard = new_guard(sink.append)
    guard.install_validator(vandal)
    guard.write_record(RESULT)

    assert handed == [b"X" * len(expected)], "the vandal did overwrite its own copy"
    assert sink == [expected]


# ---------------------------------------------------------------- configuration rules


def test_install_is_once_and_required() -> None:
    sink: list[bytes] = []
    guard = new_guard(sink.append)

    with pytest.raises(GuardConfigError, match=f"^{VALIDATOR_MISSING}$"):
        guard.write_record(SAFE)
    assert not guard.started
    guard.install_validator(None)
    with pytest.raises(GuardConfigError, match=f"^{VALIDATOR_INSTALLED}$"):
        guard.install_validator(CredentialValidator(["sk-1"]))
    guard.write_record(SAFE)
    assert sink == [encode_record(SAFE)]


def test_unencodable_record_writes_nothing_and_does_not_latch() -> None:
    sink: list[bytes] = []
    checks: list[bytes] = []

    def validator(frame: bytes) -> bool:
        checks.append(frame)
        return True

    guard = new_guard(sink.append)
    guard.install_validator(validator)
    with pytest.raises(EncodeError):
        guard.write_record({"x": float("inf")})

    assert (sink, checks, guard.failure, guard.started) == ([], [], None, True)
    with pytest.raises(GuardConfigError, match=f"^{VALIDATOR_IMMUTABLE}$"):
        guard.install_validator(None)
    guard.write_record(SAFE)
    assert sink == checks == [encode_record(SAFE)]


# ---------------------------------------------------------------- real pipes and files


def test_closed_pipe_latches_broken_pipe() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        guard = new_guard(lambda frame: os.write(write_end, frame))
        guard.install_validator(None)
        with pytest.raises(OutputFailure) as caught:
            guard.write_record(SAFE)
    finally:
        os.close(write_end)
    assert caught.value.kind is FailureKind.BROKEN_PIPE


def test_concurrent_writers_never_interleave(tmp_path: Path) -> None:
    path = tmp_path / "out.ndjson"
    threads, per_thread = 8, 200
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    start = threading.Barrier(threads)
    try:
        guard = new_guard(lambda frame: os.write(fd, frame))
        guard.install_validator(CredentialValidator(["sk-absent"]))

        def produce(worker: int) -> None:
            start.wait(TIMEOUT)
            for index in range(per_thread):
                guard.write_record({"worker": worker, "index": index, "pad": "\u2028" * index})

        pool = [threading.Thread(target=produce, args=(n,), daemon=True) for n in range(threads)]
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join(TIMEOUT)
        assert not any(thread.is_alive() for thread in pool), "a writer thread is stuck"
    finally:
        os.close(fd)

    lines = path.read_bytes().split(b"\n")
    assert lines.pop() == b""
    decoded = [json.loads(line) for line in lines]
    assert len(decoded) == threads * per_thread
    for worker in range(threads):
        mine = [record["index"] for record in decoded if record["worker"] == worker]
        assert mine == list(range(per_thread))


def test_a_latch_from_downstream_stops_every_callback_and_keeps_the_first_kind() -> None:
    calls: list[bytes] = []

    def write(frame: bytes) -> int:
        calls.append(frame)
        return len(frame)

    guard = OutputGuard(write, state_lock=threading.Lock(), write_lock=threading.RLock())
    guard.install_validator(None)
    guard.write_record({"type": "a"})
    guard.latch(FailureKind.BROKEN_PIPE)
    guard.latch(FailureKind.WRITER)
    with pytest.raises(OutputFailure) as caught:
        guard.write_record({"type": "b"})
    assert caught.value.kind == FailureKind.BROKEN_PIPE
    assert guard.failure == FailureKind.BROKEN_PIPE
    assert calls == [b'{"type":"a"}\n']
