"""The identity filter: what scaling on raw samples means."""

from __future__ import annotations

from filters.base import Denoiser


class Raw(Denoiser):
    """Pass every sample through unchanged.

    The reference point of every comparison: threshold scaling on ``raw`` reacts to each noisy
    sample, which is exactly the behaviour the other filters exist to avoid.

    >>> from filters import make_filter
    >>> make_filter("raw").filter([3.0, 1.0, 2.0]).tolist()
    [3.0, 1.0, 2.0]
    """

    name = "raw"

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        pass

    def _update(self, x: float) -> float:
        return x
