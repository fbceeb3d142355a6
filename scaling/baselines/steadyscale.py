"""steadyscale itself as a baseline-shaped policy: a Scaler fed with the arrival rate."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from filters.base import Configurable, reject
from scaling.baselines.observation import Observation
from scaling.decision import Decision
from scaling.policy import DELAY, LATENCY, OPERATION_PRICE, OPERATOR_PRICE, RESTART
from scaling.scaler import Scaler

# What the Scaler may be fed as the volume, and the observation that holds it.
VOLUMES = {"arrival": "arrival_rate", "processed": "processed_rate"}


class ScalerPolicy(Configurable):
    """A ``Scaler`` (denoiser + threshold policy + guards) behind the baselines' interface.

    Every ``interval`` seconds it feeds the observed ``arrival_rate`` to the Scaler at the
    observation's ``t`` and wants the count the Scaler decides. With ``reported=False`` it
    looks at nothing else, neither utilisation nor backlog; with ``reported=True`` the sample
    also carries what a deployed steadyscale would be told: the ``backlog``, the count actually
    ``running`` (``operators``) and the ``processed`` rate. The Scaler is built at the first
    decision, starting from the instances running then.

    Parameters
    ----------
    filter
        Denoiser spec, e.g. ``"tvd"`` or ``{"name": "moving_median", "w": 120}``; ``None``: the
        default (``scaling.default_spec``: ``changepoint`` and, unless ``guards`` are given, the
        ``confidence`` guard).
    capacity, min_operators, max_operators, latency, restart, delay
        The ``ThresholdPolicy``, as are its prices ``operator_price``, ``late_price`` (or
        ``late_probability``) and ``operation_price``.
    guards
        Guard specs, applied in order; ``None``: none, or the default's with ``filter=None``.
    interval
        Seconds between two samples and decisions (> 0).
    reported
        Whether the Scaler is told the backlog, running count and processed rate.
    volume
        What the Scaler is fed as the volume: ``"arrival"`` (the default), the arrival rate, as
        a broker reports it (consumer lag's growth, a queue's put rate), which a restart does
        not distort; or ``"processed"``, the rate the job processed, as a job measuring its own
        input reports it: none while it restarts, its whole capacity while it catches up.

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
        filter: str | Mapping[str, Any] | None = "tvd",
        capacity: float = 50.0,
        guards: Sequence[Mapping[str, Any]] | None = None,
        min_operators: int = 1,
        max_operators: int | None = None,
        interval: float = 1.0,
        latency: float = LATENCY,
        restart: float = RESTART,
        delay: float = DELAY,
        operator_price: float = OPERATOR_PRICE,
        late_price: float | None = None,
        late_probability: float | None = None,
        operation_price: float = OPERATION_PRICE,
        reported: bool = False,
        volume: str = "arrival",
    ) -> None:
        policy: dict[str, Any] = {"capacity": capacity, "min_operators": min_operators}
        policy |= {"max_operators": max_operators, "latency": latency, "restart": restart}
        policy["delay"] = delay
        policy |= {"operator_price": operator_price, "operation_price": operation_price}
        policy |= {"late_price": late_price, "late_probability": late_probability}
        spec: dict[str, Any] = {"policy": policy}
        if filter is not None:
            spec["filter"] = {"name": filter} if isinstance(filter, str) else dict(filter)
        if guards is not None:
            spec["guards"] = [dict(guard) for guard in guards]
        # Validates every part now, not at the first decision; the built spec is explicit.
        self._spec = Scaler.from_spec(spec).spec
        if not interval > 0:
            reject(self.name, "interval", interval, "interval must be > 0")
        self.interval = float(interval)
        self.reported = bool(reported)
        if volume not in VOLUMES:
            reject(self.name, "volume", volume, f"volume must be one of {list(VOLUMES)}")
        self.volume = volume
        self._scaler: Scaler | None = None
        self.last: Decision | None = None  # the last decision, whole (benchmarks.trace_decision)

    def decide(self, observation: Observation) -> int:
        if self._scaler is None:
            self._scaler = Scaler.from_spec(self._spec, operators=observation.operators)
        volume = getattr(observation, VOLUMES[self.volume])
        if not self.reported:
            self.last = self._scaler.observe(volume, observation.t)
        else:
            self.last = self._scaler.observe(
                volume,
                observation.t,
                backlog=observation.backlog,
                running=observation.operators,
                processed=observation.processed_rate,
            )
        return self.last.operators

    @property
    def spec(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "filter": self._spec["filter"],
            **self._spec["policy"],
            "guards": self._spec["guards"],
            "interval": self.interval,
            "reported": self.reported,
            # Left out as "arrival", so that the specs of runs stored before it still match.
            **({} if self.volume == "arrival" else {"volume": self.volume}),
        }
