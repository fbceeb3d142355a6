"""How often a stream is sampled, and how much of it one sample covers.

A sample is a rate over the interval since the one before: a micro-batch's rows over its
seconds, a counter's increase over a scrape interval. Where the job runs behind, a Spark
micro-batch runs longer (10 s where most take 1.5), and its volume is a mean over that many
more seconds. Counted as one sample, as every filter counted them, it took a change of level
17 micro-batches to declare (`changepoint` at the default resolution) and 17 slow batches are
minutes: on real Spark the level stayed at 84 rows/s from 35 to 185 s while 280-530 arrived
(docs/benchmarks.md, session 21). So each sample weighs the interval it covers over the
stream's typical one (``Denoiser.weighed``): a stream sampled evenly, at whatever interval,
weighs 1 every sample and is filtered as before; the one sampled unevenly counts its samples
by the time they cover.

The typical interval is the median of the last ``INTERVALS``: what the job's cadence is while
it keeps up, which a run of slow batches shorter than half of them does not move.

>>> cadence = Cadence()
>>> [cadence.seen(interval) for interval in (1.5, 1.5, 1.5, 6.0)]
[1.0, 1.0, 1.0, 4.0]
>>> cadence.typical
1.5
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import deque

from filters.noise import sorted_median

# Intervals the typical one is the median of: about as many samples as the default filter
# restarts its level from (filters.changepoint._RECENT), a minute and a half of 1.5 s
# micro-batches.
INTERVALS = 64
# Relative difference under which an interval is the typical one: timestamps are floats, and
# (t - last t) of an even grid at fractions of a second differs from the grid's step in the
# last bits; that is no coverage, and a weight of exactly 1 filters as before.
JITTER = 1e-6
# The least a sample weighs, a share of the typical interval: a sample a nanosecond after one
# of a stream sampled every 1,000 s covers 1e-12 of it, and one 5e-324 s after one (the least
# double) a share that rounds to 0.0, which no filter takes (``Denoiser.weighed``: a weight
# > 0). Below JITTER a sample already counts for nothing any filter's output shows, and 1 /
# LIGHTEST stays a plain float in the filters' arithmetic (changepoint's noise differences).
LIGHTEST = JITTER
# The most a sample weighs, as many typical intervals: a sample 1e15 s after three 1e-300 s
# apart covers 1e315 of them, an infinite weight, which no filter takes (a schema-valid batch
# answered 422). Past a million intervals every filter's level is the sample's own already,
# and 1 / HEAVIEST, like 1 / LIGHTEST, stays a plain float.
HEAVIEST = 1.0 / LIGHTEST


class Cadence:
    """The last ``INTERVALS`` intervals between samples (seconds), and their median."""

    def __init__(self, intervals: list[float] | None = None) -> None:
        self._intervals: deque[float] = deque(intervals or (), maxlen=INTERVALS)
        self._sorted = sorted(self._intervals)
        self._typical = sorted_median(self._sorted) if self._sorted else 1.0

    @property
    def typical(self) -> float:
        """The median of the intervals kept, seconds (1 before any)."""
        return self._typical

    @property
    def intervals(self) -> list[float]:
        """The intervals kept, oldest first: the state to build a ``Cadence`` from."""
        return list(self._intervals)

    def seen(self, interval: float) -> float:
        """Take the interval (seconds, > 0) since the last sample; the sample's weight, the
        interval over the typical one then (1 within ``JITTER``, from ``LIGHTEST`` to
        ``HEAVIEST``)."""
        kept = self._intervals
        oldest = kept.popleft() if len(kept) == INTERVALS else None
        kept.append(interval)
        if oldest != interval:  # an even stream's intervals leave the median as it was
            ordered = self._sorted
            if oldest is not None:
                del ordered[bisect_left(ordered, oldest)]
            insort(ordered, interval)
            self._typical = sorted_median(ordered)
        weight = interval / self._typical
        if 1.0 - JITTER < weight < 1.0 + JITTER:
            return 1.0
        return LIGHTEST if weight < LIGHTEST else HEAVIEST if weight > HEAVIEST else weight
