"""What a baseline policy sees at a decision time: one snapshot of a running stage."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Observation:
    """A stage of a stream job seen over the last ``period`` seconds, up to time ``t``.

    The simulator's queue model (``simulator.model.queue``) builds one per decision interval; a real
    deployment would fill it from its metrics system. Rates are tuples/s averaged over the
    period; fractions lie in ``[0, 1]``.

    Attributes
    ----------
    t
        End of the period, seconds (any origin; policies use differences only, never a clock).
    period
        Length of the period the averages cover, seconds (> 0).
    operators
        Instances running now, the count the rates below were measured with.
    arrival_rate
        Tuples/s that arrived at the stage's input (what a source-rate metric measures,
        noise included).
    processed_rate
        Tuples/s the stage processed (observed throughput).
    capacity
        Tuples/s one instance processes while busy: DS2's "true processing rate", which is
        ``processed_rate / (utilisation * operators)`` whenever the stage was busy at all.
    utilisation
        Busy fraction of the running instances (CPU-like utilisation).
    backlog
        Tuples waiting at ``t`` (queue length, consumer lag).
    backlog_rate
        Change of the backlog over the period divided by ``period``, tuples/s (the lag-change
        rate of Varga et al.; > 0 while the backlog grows).
    backpressure
        Fraction of the period during which the input buffer was full and the stage pushed
        back on its upstream (Dhalion's back-pressure signal).
    """

    t: float
    period: float
    operators: int
    arrival_rate: float
    processed_rate: float
    capacity: float
    utilisation: float
    backlog: float
    backlog_rate: float
    backpressure: float
