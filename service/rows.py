"""What the service's rows hold, and how values go into them and come back out.

Both backends store the same columns (``service.store.Store`` runs the statements): a stream as a
``StoredStream``, a decision as the columns ``DECISION_COLUMNS`` (which also keep the sample it
was made for), and a stream's checkpoint, the Scaler's state as JSON, as a ``Checkpoint``
together with the decisions made after it.
"""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import orjson

from scaling import Decision

STREAM_COLUMNS = "id, spec, initial_operators, operators, t, revision"
# In the order of Decision's fields, so that stored_decision(row) reads a row back.
DECISION_COLUMNS = (
    "t, volume, filtered, previous, operators, action, reason, backlog, running, processed, "
    "code, explain"
)
_DECISION_FIELDS = [name.strip() for name in DECISION_COLUMNS.split(",")]
# What a resent sample must repeat, besides its t, to be the sample that was applied.
REPEATED = ("volume", "backlog", "running", "processed")


class Applied(NamedTuple):
    """A sample as it was applied (its ``t`` and ``REPEATED``), and what its decision was:
    enough to feed it to a Scaler again and to tell whether the Scaler decided the same."""

    t: float
    volume: float
    backlog: float | None
    running: int | None
    processed: float | None
    filtered: float
    previous: int
    operators: int
    action: str
    code: str


APPLIED_COLUMNS = ", ".join(Applied._fields)


@dataclass(frozen=True)
class StoredStream:
    """A stream as stored: its configuration and where it stands.

    ``spec`` is the Scaler's ``spec``; ``operators`` and ``t`` are those of the last decision
    (``initial_operators`` and ``None`` before the first sample); ``revision`` changes on every
    write, so a writer can tell whether the stream changed since it read it.
    """

    id: str
    spec: dict[str, Any]
    initial_operators: int
    operators: int
    t: float | None
    revision: str


@dataclass(frozen=True)
class Checkpoint:
    """A stream's Scaler state as last written, and what was applied after it.

    ``state`` is ``Scaler.state_dict()`` once the sample at ``t`` was applied (``t`` is
    ``None`` for the state the stream was created with); ``written`` when it was written, Unix
    seconds; ``after`` the samples applied since, oldest first: feeding them to a Scaler loaded
    with ``state`` brings it to where the stream stands.
    """

    state: dict[str, Any]
    t: float | None
    written: float
    after: list[Applied]


class NonFiniteState(ValueError):
    """A state holding NaN or ±inf: stored, it could never be loaded again."""


def stored_stream(row: Sequence[Any]) -> StoredStream:
    """A ``StoredStream`` from the columns ``STREAM_COLUMNS``."""
    stream_id, spec, initial_operators, operators, t, revision = row
    return StoredStream(stream_id, json.loads(spec), initial_operators, operators, t, revision)


def compact_json(*, allow_nan: bool) -> Callable[[Any], str]:
    """``json.dumps(value, separators=(",", ":"), allow_nan=allow_nan)`` as a function of
    ``value``, the same string and the same errors (``tests/service/test_rows.py``).

    ``json.dumps`` builds its C encoder again at every call (a dict, a closure, the encoder):
    2 of the 4 us it takes for a decision's ``explain``, 100 times a 100-sample batch (issue
    32). This builds json's own C encoder (``_json.make_encoder``) once, with the arguments
    ``json.dumps`` gives it but no check for circular references, which the trees stored here
    cannot hold. Where json has no C encoder (not CPython), json's own encoder, built once.
    """
    make_encoder = getattr(json.encoder, "c_make_encoder", None)  # not in the type stubs
    if make_encoder is None:
        plain = json.JSONEncoder(separators=(",", ":"), allow_nan=allow_nan)
        return plain.encode
    default = json.JSONEncoder().default
    encode = make_encoder(
        None, default, json.encoder.encode_basestring_ascii, None, ":", ",", False, False,
        allow_nan,
    )  # fmt: skip
    return lambda value: "".join(encode(value, 0))


_compact = compact_json(allow_nan=True)  # a record orjson refuses: json.dumps allows NaN
_compact_state = compact_json(allow_nan=False)


def explain_json(explain: dict[str, Any]) -> str:
    """``explain`` as compact JSON, which ``json.loads`` reads back as the record.

    orjson writes it in a fifth of the time json's encoder takes (0.3 against 1.4 us for a
    volume-alone decision's record, 100 times a 100-sample batch; issue 32). It differs from
    ``json.dumps`` only where the record reads back the same (``1e-7`` for ``1e-07``, UTF-8
    for ``\\u`` escapes), and in NaN and ±inf, which it writes as ``null``: the answers write
    those as ``null`` anyway (``tests/service/test_rows.py`` compares the answers). A value
    orjson refuses (a numpy scalar, an integer past 64 bits) goes to json's encoder."""
    try:
        return orjson.dumps(explain).decode()
    except TypeError:
        return _compact(explain)


def decision_row(decision: Decision) -> tuple[Any, ...]:
    """The values of ``DECISION_COLUMNS`` for ``decision``."""
    d = decision
    explain = None if d.explain is None else explain_json(d.explain)
    return (d.t, d.volume, d.filtered, d.previous, d.operators, d.action, d.reason,
            d.backlog, d.running, d.processed, d.code, explain)  # fmt: skip


def stored_decision(row: Sequence[Any]) -> Decision:
    """The ``Decision`` of a row of ``DECISION_COLUMNS``."""
    values = dict(zip(_DECISION_FIELDS, row, strict=True))
    explain = values.pop("explain")
    return Decision(**values, explain=None if explain is None else json.loads(explain))


def dumps_state(state: dict[str, Any]) -> str:
    """``state`` as compact JSON; ``NonFiniteState`` if it holds NaN or ±inf."""
    try:
        return _compact_state(state)
    except ValueError as error:
        raise NonFiniteState(f"the state holds a number JSON cannot: {error}") from None
