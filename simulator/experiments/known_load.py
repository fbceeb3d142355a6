"""A stage provisioned by whoever knows the load: what estimating the level costs a policy.

DESIGN's oracle thresholds the noise-free trend. On the queue model the noisy volume *is* the
load, so a threshold on the trend alone runs late whenever the noise rises. ``KnownLoad``
knows instead, for every second, the distribution of that second's arrivals — their mean
``m_t`` and deviation ``d_t`` (``simulator.model.noise.clipped_moments``: the trend, its noise
and the clipping at 0) — and provisions, each second,

    wanted_t = needed(the highest m + h over the next `ahead` seconds)

where ``h`` is the default's headroom, ``ThresholdPolicy.headroom(m, d, restart=pause)`` (the
delay kept under the latency at risk 1/1000 against the noise and a restart), or a fixed
number of tuples/s. ``ahead = pause + latency``: a scale-up lands after its restart and must
serve what arrives within the latency. It scales down only as far as the highest need of the
next ``hold`` seconds (300 s, the HPA's scale-down window) allows, so it never scales down into
a rise it knows is coming. Then it sizes and times each operation as the default does for a
job that reports its backlog (``scaling.queue.queue_target``: the backlog the operation finds
and its restart's served within the latency, an operation that would be late held), with the
known ``m`` and ``d`` in place of the filter's level and noise.

It reads the future, so it is no policy a user can run; nor is it a lower bound (its
look-ahead buys capacity for every spike of a spiky trace, and a policy could time its
operations better). It answers one question: what a cell costs once the level is known and
only the noise is not — how much of a policy's cost is the price of estimating its level
(``benchmarks.compare_knobs --known-load``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from scaling.baselines import Observation
from scaling.policy import LATENCY, ThresholdPolicy
from scaling.queue import queue_target
from simulator.model.noise import clipped_moments

HOLD = 300.0  # seconds a scale-down must serve: the HPA's scale-down stabilisation window


class KnownLoad:
    """Provisions every second for the load it knows is coming (see the module).

    ``trend`` is the noise-free volume, one value per second from the run's start
    (``observation.t`` is read as seconds from it); ``sigma`` the noise's standard deviation
    before clipping; ``headroom`` ``None`` for the default's headroom, else tuples/s;
    ``restart_noise=False`` sizes operations for the backlog and the restart without the noise
    that arrives meanwhile (``ThresholdPolicy.recovery`` with no noise).

    >>> known = KnownLoad(np.full(600, 400.0), 0.0, capacity=50.0, pause=8.0, max_operators=20)
    >>> known.decide(Observation(1.0, 1.0, 4, 0.0, 0.0, 50.0, 0.0, 0.0, 0.0, 0.0))
    8
    >>> KnownLoad(np.full(600, 400.0), 0.0, 50.0, 8.0, 20, headroom=60.0).wanted(0, 10.0)
    10
    """

    name = "known load"
    interval = 1.0

    def __init__(
        self,
        trend: np.ndarray,
        sigma: float,
        capacity: float,
        pause: float,
        max_operators: int,
        headroom: float | None = None,
        restart_noise: bool = True,
        hold: float = HOLD,
    ) -> None:
        self.policy = ThresholdPolicy(capacity, max_operators=max_operators)
        self.pause, self.hold, self.headroom = float(pause), float(hold), headroom
        self.restart_noise = restart_noise
        self.ahead = self.pause + LATENCY
        self.mean, self.deviation = clipped_moments(trend, sigma)
        # The capacity each second's load needs, tuples/s.
        self.need = np.array(
            [
                m + (self.policy.headroom(m, d, self.pause) if headroom is None else headroom)
                for m, d in zip(self.mean.tolist(), self.deviation.tolist(), strict=True)
            ]
        )

    def decide(self, observation: Observation) -> int:
        now = min(max(int(observation.t), 0), self.need.size - 1)
        operators, wanted = observation.operators, self.wanted(now, self.ahead)
        if wanted < operators:
            wanted = min(operators, max(wanted, self.wanted(now, self.hold)))
        level, noise = float(self.mean[now]), float(self.deviation[now])
        backlog = observation.backlog
        noise = noise if self.restart_noise else 0.0
        return queue_target(self.policy, wanted, operators, backlog, level, noise, self.pause, [])

    def wanted(self, now: int, ahead: float) -> int:
        """The count that serves the highest need of the ``ahead`` seconds from ``now``."""
        return self.policy.needed(float(self.need[now : now + max(int(ahead), 1)].max()))

    @property
    def spec(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "headroom": self.headroom,
            "restart_noise": self.restart_noise,
            "hold": self.hold,
        }
