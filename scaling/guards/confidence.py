"""Confidence: scale on the filtered volume's uncertainty band, not on its point value."""

from __future__ import annotations

from filters.base import check_number
from scaling.guards.base import Guard, Moment


class Confidence(Guard):
    """Scale on what the filtered volume surely needs: a dead band as wide as its uncertainty.

    With :math:`\\bar v` the filtered volume, :math:`s` its standard error (``spread``),
    :math:`n` the running count and :math:`N(v)` the policy's count for volume :math:`v`:

    .. math:: \\text{result} = \\begin{cases}
              N(\\bar v + z_\\uparrow s) & \\text{if } N(\\bar v + z_\\uparrow s) > n \\\\
              N(\\bar v + z_\\downarrow s) & \\text{if } N(\\bar v + z_\\downarrow s) < n \\\\
              n & \\text{otherwise}
              \\end{cases}

    with :math:`z_\\uparrow` = ``up`` and :math:`z_\\downarrow` = ``down`` (``down >= up``).
    So a scale-up happens once the level is probably above the threshold, provisioning for the
    upper part of what the level may be (running short costs more than one spare operator), and
    a scale-down only once even the level plus ``down`` standard errors fits in fewer
    operators. The band is :math:`(z_\\downarrow - z_\\uparrow)\\,s` wide: wide while the
    estimate is young or the noise large compared with one operator's capacity, narrow once the
    level has been stable for long. A fixed band (``hysteresis``) is right for one noise level
    only. While the filter reports no standard error yet (``spread`` is ``None``: its warm-up,
    8 samples for ``changepoint``) the count is held. The guard replaces the count the policy
    asked for; put it first.

    Parameters
    ----------
    up
        Standard errors above the filtered volume provisioned for when scaling up, a number
        >= 0 (0: the filtered volume itself).
    down
        Standard errors above the filtered volume that must fit in fewer operators before
        scaling down, a number >= ``up``.

    >>> from scaling import ThresholdPolicy
    >>> policy, guard = ThresholdPolicy(capacity=50.0), Confidence(up=0.5, down=2.0)
    >>> guard.apply(6, current=7, filtered=290.0, t=0.0, policy=policy, spread=10.0)
    (7, 'held by confidence: 290.0 + 2 x 10.0 is not below 300.0')
    >>> guard.apply(6, current=7, filtered=270.0, t=0.0, policy=policy, spread=10.0)
    (6, None)
    >>> guard.apply(7, current=7, filtered=348.0, t=0.0, policy=policy, spread=10.0)
    (8, 'raised by confidence: 348.0 + 0.5 x 10.0 needs 8')
    """

    name = "confidence"
    needs_spread = True

    def __init__(self, up: float = 0.0, down: float = 1.5) -> None:
        check_number(self.name, "up", up, minimum=0)
        check_number(self.name, "down", down, minimum=up)
        self.up = float(up)
        self.down = float(down)

    def _decide(self, target: int, now: Moment) -> tuple[int, str | None]:
        current, filtered, policy, spread = now.current, now.filtered, now.policy, now.spread
        if spread is None:
            # The filter cannot yet say how uncertain it is (warm-up): keep what runs.
            if target == current:
                return target, None
            return current, "held by confidence: no standard error yet (the filter warms up)"
        upper = policy.needed(filtered + self.up * spread)
        if upper > current:
            if upper == target:
                return target, None
            return upper, f"raised by confidence: {_band(filtered, self.up, spread)} needs {upper}"
        lower = policy.needed(filtered + self.down * spread)
        if lower < current:
            return lower, None if lower == target else f"limited by confidence: {lower}"
        if target == current:
            return target, None
        if target > current:
            band = _band(filtered, self.up, spread)
            return current, f"held by confidence: {band} needs {upper}"
        threshold = (current - 1) * policy.capacity
        band = _band(filtered, self.down, spread)
        return current, f"held by confidence: {band} is not below {threshold:.1f}"


def _band(filtered: float, z: float, spread: float) -> str:
    return f"{filtered:.1f} + {z:g} x {spread:.1f}"
