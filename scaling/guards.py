"""Guards: small, named rules that hold or limit the operator count the policy asks for.

The Scaler applies its guards in order, each to the previous one's output, then tells every
guard what finally happened. A guard is a pure function of its arguments and of the state it
recorded. It never reads a clock: the time of each sample is passed in as ``t`` (seconds).

Like the filters, a guard's constructor arguments are its settings, stored under their own
names and validated in ``__init__``; what it records lives in underscore attributes, exported by
``state_dict()`` as JSON values.

>>> from scaling import ThresholdPolicy
>>> guard = make_guard({"name": "max_step", "up": 2})
>>> guard.apply(9, current=3, filtered=430.0, t=0.0, policy=ThresholdPolicy(capacity=50.0))
(5, 'limited by max_step: at most +2 per decision')
>>> available_guards()
['confidence', 'cooldown', 'hysteresis', 'max_step', 'stabilization']
"""

from __future__ import annotations

import abc
from collections import deque
from itertools import pairwise
from typing import Any, ClassVar

from filters.base import Configurable, build, check_number
from scaling.policy import ThresholdPolicy


class Guard(Configurable, abc.ABC):
    """Base class of the guards: subclasses set ``name`` (the registry key) and write ``apply``.

    A guard that decides from the uncertainty of the filtered volume sets ``needs_spread``; the
    Scaler then refuses a filter that does not report one.

    ``spec``, ``state_dict()`` and ``load_state_dict()`` come from ``filters.base.Configurable``.
    Stateful guards also override ``record`` (the only method that changes their state),
    ``_export_state`` and ``_parse_state`` (which validates a loaded state before it is used).
    """

    needs_spread: ClassVar[bool] = False

    @abc.abstractmethod
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


class Cooldown(Guard):
    """No new scaling operation in a direction for a while after scaling.

    With :math:`t_\\uparrow`, :math:`t_\\downarrow` the times of the last scale-up and
    scale-down that were carried out:

    * a scale-up (``target > current``) is held at ``current`` while
      :math:`t - t_\\uparrow <` ``up``;
    * a scale-down (``target < current``) is held at ``current`` while
      :math:`t - \\max(t_\\uparrow, t_\\downarrow) <` ``down``.

    So any scaling operation restarts the scale-down cooldown, while a scale-down never delays
    a scale-up: capacity just added because the load rose should not be released at once, but
    a rise in load after a scale-down must be met without waiting, since running short of
    operators costs more than running a few too many.

    Parameters
    ----------
    up
        Seconds after a scale-up before the next scale-up; a number >= 0.
    down
        Seconds after any scaling operation before a scale-down; a number >= 0.

    >>> from scaling import ThresholdPolicy
    >>> policy, guard = ThresholdPolicy(capacity=50.0), Cooldown(up=30.0, down=120.0)
    >>> guard.record(4, 5, 100.0, target=5)
    >>> guard.apply(3, current=5, filtered=140.0, t=140.0, policy=policy)
    (5, 'held by cooldown: last scale-up 40 s ago < 120 s')
    >>> guard.apply(7, current=5, filtered=340.0, t=140.0, policy=policy)
    (7, None)
    """

    name = "cooldown"

    def __init__(self, up: float = 0.0, down: float = 0.0) -> None:
        check_number(self.name, "up", up, minimum=0)
        check_number(self.name, "down", down, minimum=0)
        self.up = float(up)
        self.down = float(down)
        self._last_up: float | None = None
        self._last_down: float | None = None

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
        if target > current:
            limit, restarted_by = self.up, {"scale-up": self._last_up}
        elif target < current:
            limit = self.down
            restarted_by = {"scale-up": self._last_up, "scale-down": self._last_down}
        else:
            return target, None
        past = [(time, what) for what, time in restarted_by.items() if time is not None]
        if past:
            time, what = max(past)
            if t - time < limit:
                elapsed = f"{_seconds(t - time)} s ago < {_seconds(limit)} s"
                return current, f"held by cooldown: last {what} {elapsed}"
        return target, None

    def record(self, operators_before: int, operators_after: int, t: float, *, target: int) -> None:
        if operators_after > operators_before:
            self._last_up = t
        elif operators_after < operators_before:
            self._last_down = t

    def _export_state(self) -> dict[str, Any]:
        return {"_last_up": self._last_up, "_last_down": self._last_down}

    def _parse_state(self, values: dict[str, Any]) -> dict[str, Any]:
        for field in ("_last_up", "_last_down"):
            if values[field] is not None:
                check_number(self.name, field, values[field])
        return {
            field: None if values[field] is None else float(values[field])
            for field in ("_last_up", "_last_down")
        }


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
            raise ValueError(
                f"{self.name}: band={band!r} is not allowed: band must be a number >= 0 and < 1"
            )
        self.band = float(band)

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
        if target >= current:
            return target, None
        threshold = (current - 1) * policy.capacity * (1 - self.band)
        if filtered < threshold:
            return target, None
        reason = f"filtered {filtered:.1f} is not below {threshold:.1f} (band {self.band:g})"
        return current, f"held by hysteresis: {reason}"


class Stabilization(Guard):
    """Scale down only to the highest recommendation of the last ``window`` seconds.

    Kubernetes HPA's scale-down stabilisation. With :math:`r_i` the targets this guard was given
    at times :math:`t_i` (the current one included) and :math:`W` = ``window``:

    .. math:: \\text{peak} = \\max\\{ r_i : t - t_i < W \\}, \\qquad
              \\text{result} = \\begin{cases} \\text{target} & \\text{target} \\ge
              \\text{current} \\\\ \\min(\\text{current}, \\text{peak}) & \\text{otherwise}
              \\end{cases}

    Scale-ups are immediate; a scale-down waits until every higher recommendation is ``window``
    seconds old, and never goes above the current count. A recommendation exactly ``window``
    seconds old no longer counts.

    Memory is a deque of (time, recommendation) pairs with the recommendations strictly
    decreasing: a new recommendation removes every older one that is not higher (those can
    never be the peak again, as the new one outlives them), and entries older than the window
    leave from the front. The first entry inside the window is the peak; each pair is added and
    removed once (amortised O(1) per decision), and there is at most one entry per distinct
    recommendation.

    Parameters
    ----------
    window
        Seconds a recommendation is remembered; a number >= 0 (0 turns the guard off).

    >>> from scaling import ThresholdPolicy
    >>> policy, guard = ThresholdPolicy(capacity=50.0), Stabilization(window=300.0)
    >>> guard.record(6, 6, 0.0, target=6)
    >>> guard.apply(2, current=6, filtered=90.0, t=120.0, policy=policy)
    (6, 'held by stabilization: 6 recommended 120 s ago, within 300 s')
    >>> guard.apply(2, current=6, filtered=90.0, t=300.0, policy=policy)
    (2, None)
    """

    name = "stabilization"

    def __init__(self, window: float = 300.0) -> None:
        check_number(self.name, "window", window, minimum=0)
        self.window = float(window)
        self._recent: deque[tuple[float, int]] = deque()

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
        if target >= current:
            return target, None
        # Entries are oldest first, so the first one inside the window is the peak of the rest.
        inside = (entry for entry in self._recent if t - entry[0] < self.window)
        time, recommendation = next(inside, (t, target))
        if recommendation <= target:
            return target, None
        result = min(current, recommendation)
        verb = "held" if result == current else "limited"
        age = f"{_seconds(t - time)} s ago, within {_seconds(self.window)} s"
        return result, f"{verb} by stabilization: {recommendation} recommended {age}"

    def record(self, operators_before: int, operators_after: int, t: float, *, target: int) -> None:
        recent = self._recent
        while recent and recent[-1][1] <= target:
            recent.pop()
        recent.append((t, target))
        while recent and t - recent[0][0] >= self.window:
            recent.popleft()

    def _export_state(self) -> dict[str, Any]:
        return {"_recent": [list(entry) for entry in self._recent]}

    def _parse_state(self, values: dict[str, Any]) -> dict[str, Any]:
        entries = values["_recent"]
        if not isinstance(entries, list | tuple) or not all(
            isinstance(entry, list | tuple) and len(entry) == 2 for entry in entries
        ):
            raise ValueError(
                f"{self.name}: _recent={entries!r} is not allowed: _recent must be a list of "
                "[t, recommendation] pairs"
            )
        for time, recommendation in entries:
            check_number(self.name, "_recent time", time)
            check_number(
                self.name, "_recent recommendation", recommendation, minimum=0, integer=True
            )
        if not all(a[0] <= b[0] and a[1] > b[1] for a, b in pairwise(entries)):
            raise ValueError(
                f"{self.name}: _recent={entries!r} is not allowed: times must not decrease and "
                "recommendations must decrease"
            )
        return {"_recent": deque((float(time), int(rec)) for time, rec in entries)}


class MaxStep(Guard):
    """At most ``up`` operators added and ``down`` removed per decision.

    .. math:: \\text{result} = \\min(\\text{target}, \\text{current} + \\text{up})
              \\text{ when scaling up}, \\quad
              \\max(\\text{target}, \\text{current} - \\text{down}) \\text{ when scaling down}

    Parameters
    ----------
    up
        Most operators added per decision, an integer >= 1, or ``None`` for no limit.
    down
        Most operators removed per decision, an integer >= 1, or ``None`` for no limit.

    >>> from scaling import ThresholdPolicy
    >>> MaxStep(down=1).apply(2, current=6, filtered=90.0, t=0.0,
    ...                       policy=ThresholdPolicy(capacity=50.0))
    (5, 'limited by max_step: at most -1 per decision')
    """

    name = "max_step"

    def __init__(self, up: int | None = None, down: int | None = None) -> None:
        for param, value in (("up", up), ("down", down)):
            if value is not None:
                check_number(self.name, param, value, minimum=1, integer=True)
        self.up = None if up is None else int(up)
        self.down = None if down is None else int(down)

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
        if self.up is not None and target > current + self.up:
            return current + self.up, f"limited by max_step: at most +{self.up} per decision"
        if self.down is not None and target < current - self.down:
            return current - self.down, f"limited by max_step: at most -{self.down} per decision"
        return target, None


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


_REGISTRY: dict[str, type[Guard]] = {
    cls.name: cls for cls in (Confidence, Cooldown, Hysteresis, Stabilization, MaxStep)
}


def available_guards() -> list[str]:
    """Names accepted by ``make_guard``, sorted."""
    return sorted(_REGISTRY)


def make_guard(spec: str | dict[str, Any], **params: Any) -> Guard:
    """Build a guard from its name and settings, or from a spec dict.

    ``make_guard("cooldown", up=30, down=120)`` and
    ``make_guard({"name": "cooldown", "up": 30, "down": 120})`` are the same guard;
    ``make_guard(g.spec)`` rebuilds ``g``'s settings (not its state). Unknown names and settings
    raise ``ValueError`` saying what is allowed.

    >>> make_guard({"name": "cooldown", "up": 30, "down": 120}).spec
    {'name': 'cooldown', 'up': 30.0, 'down': 120.0}
    """
    return build("guard", _REGISTRY, spec, **params)


def _band(filtered: float, z: float, spread: float) -> str:
    return f"{filtered:.1f} + {z:g} x {spread:.1f}"


def _seconds(value: float) -> str:
    """Seconds to the millisecond, without trailing zeros: 40.0 -> '40', 2.5 -> '2.5'."""
    return f"{value:.3f}".rstrip("0").rstrip(".")
