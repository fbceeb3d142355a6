"""What the Scaler decided for one sample, and why."""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

Action = Literal["up", "down", "none"]


@dataclasses.dataclass(frozen=True)
class Decision:
    """One scaling decision: the sample, its filtered value and the operator count it led to.

    Attributes
    ----------
    t
        Time of the sample, seconds (any origin; only differences matter).
    volume
        The sample, tuples/s.
    filtered
        The denoiser's output for the sample, tuples/s.
    previous
        Operators before the decision.
    operators
        Operators after the decision.
    action
        ``"up"`` if ``operators > previous``, ``"down"`` if ``operators < previous``, else
        ``"none"``.
    reason
        Human-readable explanation: what the policy asked for, then what each guard or bound
        that changed or held the count said, separated by ``"; "``.
    backlog, running, processed
        What the job reported with the sample, ``None`` when it did not (records waiting,
        operators actually running, records/s processed). With ``running``, ``previous`` is
        that count.

    >>> d = Decision(t=3.0, volume=330.0, filtered=312.4, previous=6, operators=7, action="up",
    ...              reason="filtered 312.4 needs 7 > 6")
    >>> d.to_dict()["action"]
    'up'
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

    def to_dict(self) -> dict[str, Any]:
        """The fields as a JSON-ready dict."""
        return dataclasses.asdict(self)
