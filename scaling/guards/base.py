"""The contract of a guard (see ``scaling.guards``)."""

from __future__ import annotations

import abc
from typing import Any, ClassVar, NamedTuple

from filters.base import Configurable
from scaling.policy import ThresholdPolicy


class Moment(NamedTuple):
    """What a guard is told about one decision besides the target (see ``Guard.apply``)."""

    current: int
    filtered: float
    t: float
    policy: ThresholdPolicy
    spread: float | None


class Guard(Configurable, abc.ABC):
    """Base class of the guards: subclasses set ``name`` (the registry key) and write ``_decide``.

    A guard that decides from the uncertainty of the filtered volume sets ``needs_spread``; the
    Scaler then refuses a filter that does not report one.

    ``spec``, ``state_dict()`` and ``load_state_dict()`` come from ``filters.base.Configurable``.
    Stateful guards also override ``record`` (the only method that changes their state),
    ``_export_state`` and ``_parse_state`` (which validates a loaded state before it is used).
    """

    needs_spread: ClassVar[bool] = False

    def apply(
        self,
        target: int,
        *,
        current: int,
        filtered: float,
        t: float,
        policy: ThresholdPolicy,
        spread: float | None = None,
    ) -> tuple[int, str | None]:
        """Return the target, changed or not, and a reason when it was changed or held.

        Parameters
        ----------
        target
            Operators asked for by the policy, or by the guard before this one.
        current
            Operators running before this decision.
        filtered
            The filtered volume the policy decided on, tuples/s.
        t
            Time of the sample, seconds.
        policy
            The policy that produced the first target (its capacity and bounds).
        spread
            Standard error of ``filtered`` (tuples/s), from filters that report one
            (``Denoiser.spread``); ``None`` otherwise.
        """
        return self._decide(target, Moment(current, filtered, t, policy, spread))

    def decide(self, target: int, now: Moment) -> tuple[int, str | None]:
        """``apply`` with its arguments in a ``Moment``, which a Scaler builds once per
        decision for all its guards."""
        return self._decide(target, now)

    @abc.abstractmethod
    def _decide(self, target: int, now: Moment) -> tuple[int, str | None]:
        """``apply``'s work, the one method each guard writes: ``now`` holds its arguments."""

    def record(  # noqa: B027 (a hook: stateless guards keep this no-op)
        self, operators_before: int, operators_after: int, t: float, *, target: int
    ) -> None:
        """Learn the outcome of the decision at ``t``; stateless guards ignore it.

        ``target`` is what this guard was given by ``apply`` for the same decision, so that a
        guard can remember recommendations as well as the operations that were carried out.
        """

    def _export_state(self) -> dict[str, Any]:
        return {}

    def _import_state(self, values: dict[str, Any]) -> None:
        fields = sorted(self._export_state())
        if not isinstance(values, dict) or set(values) != set(fields):
            got = list(values) if isinstance(values, dict) else values
            raise ValueError(f"{self.name}: state fields {got!r} do not match {fields!r}")
        self.__dict__.update(self._parse_state(values))

    def _parse_state(self, values: dict[str, Any]) -> dict[str, Any]:
        """Check exported state (its fields are known to match) and return attribute values."""
        return {}


def _seconds(value: float) -> str:
    """Seconds to the millisecond, without trailing zeros: 40.0 -> '40', 2.5 -> '2.5'."""
    return f"{value:.3f}".rstrip("0").rstrip(".")
