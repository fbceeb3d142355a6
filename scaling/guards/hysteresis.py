"""Hysteresis: scale down only once the filtered volume is clearly below the threshold."""

from __future__ import annotations

from filters.base import check_number, reject
from scaling.guards.base import Guard, Moment


class Hysteresis(Guard):
    """A dead band under each threshold: scale down only once the volume is clearly lower.

    A scale-down from ``current`` = :math:`n` operators is held at :math:`n` unless

    .. math:: \\bar v < (n - 1)\\, c\\, (1 - \\text{band})

    with :math:`\\bar v` the filtered volume and :math:`c` the policy's capacity. When it is
    allowed, the target passes unchanged (it may remove several operators). Scale-ups are never
    touched, so a volume hovering around a threshold costs one scale-up, not a series of
    up-down pairs.

    Parameters
    ----------
    band
        Width of the dead band as a fraction of the threshold, a number in [0, 1). With 0 only
        a volume exactly at :math:`(n - 1)\\, c` is held, where the policy alone would scale down.

    >>> from scaling import ThresholdPolicy
    >>> policy, guard = ThresholdPolicy(capacity=50.0), Hysteresis(band=0.1)
    >>> guard.apply(2, current=3, filtered=95.0, t=0.0, policy=policy)
    (3, 'held by hysteresis: filtered 95.0 is not below 90.0 (band 0.1)')
    >>> guard.apply(2, current=3, filtered=89.0, t=0.0, policy=policy)
    (2, None)
    """

    name = "hysteresis"

    def __init__(self, band: float = 0.1) -> None:
        check_number(self.name, "band", band, minimum=0)
        if band >= 1:
            # check_number has no exclusive maximum; word the message the same way.
            reject(self.name, "band", band, "band must be a number >= 0 and < 1")
        self.band = float(band)

    def _decide(self, target: int, now: Moment) -> tuple[int, str | None]:
        current, filtered, policy = now.current, now.filtered, now.policy
        if target >= current:
            return target, None
        threshold = (current - 1) * policy.capacity * (1 - self.band)
        if filtered < threshold:
            return target, None
        reason = f"filtered {filtered:.1f} is not below {threshold:.1f} (band {self.band:g})"
        return current, f"held by hysteresis: {reason}"
