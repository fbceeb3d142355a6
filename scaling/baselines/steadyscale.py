"""steadyscale itself as a baseline-shaped policy: a Scaler fed with the arrival rate."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scaling.baselines.observation import Observation
from scaling.scaler import Scaler


class ScalerPolicy:
    """A ``Scaler`` (denoiser + threshold policy + guards) behind the baselines' interface.

    Every ``interval`` seconds it feeds the observed ``arrival_rate`` to the Scaler at the
    observation's ``t`` and wants the count the Scaler decides. It looks at nothing else:
    neither utilisation nor backlog, which is the point of the comparison. The Scaler is built
    at the first decision, starting from the instances running then.

    Parameters
    ----------
    filter
        Denoiser spec, e.g. ``"tvd"`` or ``{"name": "moving_median", "w": 120}``.
    capacity, min_operators, max_operators
        The ``ThresholdPolicy``.
    guards
        Guard specs, applied in order.
    interval
        Seconds between two samples and decisions (> 0).

    >>> from scaling.baselines import Observation
    >>> policy = ScalerPolicy("raw", capacity=50.0)
    >>> seen = Observation(t=0.0, period=1.0, operators=2, arrival_rate=170.0,
    ...                    processed_rate=100.0, capacity=50.0, utilisation=1.0, backlog=70.0,
    ...                    backlog_rate=70.0, backpressure=0.0)
    >>> policy.decide(seen)
    4
    """

    name = "steadyscale"

    def __init__(
        self,
        filter: str | Mapping[str, Any] = "tvd",
        capacity: float = 50.0,
        guards: Sequence[Mapping[str, Any]] = (),
        min_operators: int = 1,
        max_operators: int | None = None,
        interval: float = 1.0,
    ) -> None:
        filter_spec = {"name": filter} if isinstance(filter, str) else dict(filter)
        self._spec: dict[str, Any] = {
            "filter": filter_spec,
            "policy": {
                "capacity": capacity,
                "min_operators": min_operators,
                "max_operators": max_operators,
            },
            "guards": [dict(guard) for guard in guards],
        }
        Scaler.from_spec(self._spec)  # validates every part now, not at the first decision
        if not interval > 0:
            raise ValueError(f"ScalerPolicy: interval={interval!r} is not allowed: it must be > 0")
        self.interval = float(interval)
        self._scaler: Scaler | None = None

    def decide(self, observation: Observation) -> int:
        if self._scaler is None:
            self._scaler = Scaler.from_spec(self._spec, operators=observation.operators)
        return self._scaler.observe(observation.arrival_rate, observation.t).operators

    @property
    def spec(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "filter": self._spec["filter"],
            **self._spec["policy"],
            "guards": self._spec["guards"],
            "interval": self.interval,
        }
