"""What the Scaler decided for one sample, and why: a reason code, the record, the prose."""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

Action = Literal["up", "down", "none"]
# Why a decision came out as it did, in the style of the HPA's conditions; the first that applies.
Code = Literal[
    "WarmingUp",  # the filter cannot yet say how uncertain its level is: the count is held
    "LimitedByGuard",  # a guard changed or held the count
    "LimitedByBound",  # min_operators or max_operators changed the count
    "WaitingToLand",  # a decided count that is not running yet is asked for again
    "ScaledUp",  # more operators
    "ScaledDown",  # fewer operators
    "HeldForCost",  # another count is needed by the level, but it would cost more
    "Steady",  # the level needs the count that runs
    "Fallback",  # no decision: the stream's source failed, its stated fallback count applies
]
CODES: tuple[str, ...] = Code.__args__  # type: ignore[attr-defined]


@dataclasses.dataclass(frozen=True)
class Decision:
    """One scaling decision: the sample, its filtered value and the operator count it led to.

    Attributes
    ----------
    t
        Time of the sample, seconds (any origin; only differences matter).
    volume
        The sample, records/s.
    filtered
        The denoiser's output for the sample, records/s.
    previous
        Operators before the decision.
    operators
        Operators after the decision.
    action
        ``"up"`` if ``operators > previous``, ``"down"`` if ``operators < previous``, else
        ``"none"``.
    reason
        Human-readable explanation, generated from ``code`` and ``explain``, then what each guard
        or bound that changed or held the count said, separated by ``"; "``.
    backlog, running, processed
        What the job reported with the sample, ``None`` when it did not (records waiting,
        operators actually running, records/s processed). With ``running``, ``previous`` is
        that count.
    code
        One of ``CODES``: why the count came out as it did.
    explain
        The record the reason is written from: the inputs the decision used and, for a stage
        that reports its backlog, the expected cost terms of the count chosen and of one more
        and one fewer (``scaling.choice.Choice.explain``); for a volume alone, the count the
        filtered volume needs.

    >>> d = Decision(t=3.0, volume=330.0, filtered=312.4, previous=6, operators=7, action="up",
    ...              reason="filtered 312.4 needs 7 > 6", code="ScaledUp")
    >>> d.to_dict()["code"]
    'ScaledUp'
    """

    t: float
    volume: float
    filtered: float
    previous: int
    operators: int
    action: Action
    reason: str
    backlog: float | None = None
    running: int | None = None
    processed: float | None = None
    code: str = "Steady"
    explain: dict[str, Any] | None = None

    @classmethod
    def made(
        cls,
        t: float,
        volume: float,
        filtered: float,
        previous: int,
        operators: int,
        action: Action,
        reason: str,
        backlog: float | None,
        running: int | None,
        processed: float | None,
        code: str,
        explain: dict[str, Any] | None,
    ) -> Decision:
        """``Decision(...)`` of every field, without the frozen dataclass's ``__init__``, which
        sets each of the twelve through ``object.__setattr__``: an eighth of the instructions
        of a Scaler's decision, which makes one per sample (issue 32). The fields go straight
        into the new instance's ``__dict__``, where ``__init__`` puts them; a Decision has no
        ``__post_init__`` to run (``tests/scaling/test_decision.py`` compares the two)."""
        made = object.__new__(cls)
        made.__dict__.update(
            t=t, volume=volume, filtered=filtered, previous=previous, operators=operators,
            action=action, reason=reason, backlog=backlog, running=running,
            processed=processed, code=code, explain=explain,
        )  # fmt: skip
        return made

    def to_dict(self) -> dict[str, Any]:
        """The fields as a JSON-ready dict."""
        return dataclasses.asdict(self)


def cost_reason(previous: int, operators: int, explain: dict[str, Any]) -> str:
    """The prose of a cost-model decision, from its record: the chosen count's expected cost
    against one more and one fewer (with the chance that a later operation corrects it, where
    that is 1 % or more), and the inputs that made them.

    >>> explain = {"inputs": {"level": 380.0, "level_error": 5.0, "backlog": 0.0,
    ...                       "restart": 8.0, "landing": 0.0},
    ...            "candidates": [{"operators": 8, "total": 2464.0, "late_seconds": 0.0,
    ...                            "correction": 0.2},
    ...                           {"operators": 9, "total": 2802.0, "late_seconds": 0.0}]}
    >>> cost_reason(8, 8, explain)  # doctest: +NORMALIZE_WHITESPACE
    '8: expected cost 2464 (0.0 late s, 20 % corrected later); 9 would cost 2802 (0.0 late s);
     level 380.0 ± 5.0, backlog 0, restart 8 s'
    """
    rows = {row["operators"]: row for row in explain["candidates"]}
    chosen = rows[operators]
    # Each neighbour's cost on its own: "a < b < c" would also compare the two neighbours.
    others = [
        f"{count} would cost {row['total']:.0f} ({_late(row)})"
        for count, row in rows.items()
        if count != operators
    ]
    inputs = explain["inputs"]
    restart = f"restart {inputs['restart']:g} s"
    down = inputs.get("restart_down", inputs["restart"])  # none in records from before
    if down != inputs["restart"]:
        restart += f" up, {down:g} s down"
    where = (
        f"level {inputs['level']:.1f} ± {inputs['level_error']:.1f}, "
        f"backlog {inputs['backlog']:.0f}, {restart}"
    )
    if operators != previous and inputs["landing"] > 0.0:
        where += f", lands in {inputs['landing']:g} s"
    overdue = inputs.get("overdue", 0.0)  # none in records from before
    if overdue > 0.0:
        delay = inputs.get("delay")  # none in records from before session 30
        its = "its delay" if delay is None else f"its {delay:g} s delay"
        where += f"; the decision waiting to land is {overdue:g} s past {its}"
    pending = inputs.get("pending")  # none in records from before
    if pending is not None and pending != previous:
        where += f"; {previous} of {pending} decided run: {pending} is the rest of that operation"
    head = f"{operators}: expected cost {chosen['total']:.0f} ({_late(chosen)})"
    deferred = explain.get("deferred")
    if deferred is not None:
        head = (
            f"held at {operators} until the backlog drains: {deferred['operators']} in "
            f"{deferred['wait']:.0f} s costs {deferred['later']:.0f} < {deferred['now']:.0f} now"
        )
        others = []
    return "; ".join([head, ", ".join(others)] if others else [head]) + f"; {where}"


def _late(row: dict[str, Any]) -> str:
    """A count's late seconds, and the chance of its correction where it is 1 % or more (a
    record from before the correction was priced has none)."""
    late, percent = f"{row['late_seconds']:.1f} late s", round(100.0 * row.get("correction", 0.0))
    return f"{late}, {percent} % corrected later" if percent >= 1 else late


def reason_code(
    operators: int, previous: int, pending: bool, needed: int, guarded: bool, bounded: bool
) -> str:
    """The reason code (``scaling.decision.CODES``): the first that applies."""
    if guarded:
        return "LimitedByGuard"
    if bounded:
        return "LimitedByBound"
    if pending:
        return "WaitingToLand"
    if operators != previous:
        return "ScaledUp" if operators > previous else "ScaledDown"
    return "Steady" if needed == previous else "HeldForCost"
