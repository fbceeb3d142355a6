"""The threshold policy: how many operators a volume needs."""

from __future__ import annotations

import inspect
import math
from typing import Any

from filters.base import check_number, reject

# v / capacity is rounded: 2.1 / 0.3 gives 7.000000000000001, whose ceiling would add an
# operator that no one asked for. A billionth of an operator is far below any real load change
# and far above that rounding (for fewer than about a million operators).
ROUNDING_TOLERANCE = 1e-9
# Seconds to drain a reported backlog in, by default (Flink's job.autoscaler.catch-up.duration
# of 5 minutes in its documented configurations).
CATCH_UP = 300.0
# Seconds after a scaling operation during which a reported backlog is not acted on: the
# restart itself piles one up (processing stops while operators move), which the new count
# drains; acting on it scales again and restarts again (FLINK-31318, keda#5008).
QUIET = 60.0
# Weight of a volume sample within the quiet period: 1, used as any other. 0 ignores it, as the
# Flink autoscaler's stabilisation interval and KEDA's initialCooldownPeriod ignore every
# metric; on the compare grid that leaves the count blind to a rise for a minute after each
# operation and costs SLA seconds, even when the volume is a rate the job measures itself and
# a restart distorts (docs/baselines.md).
QUIET_WEIGHT = 1.0
# Queueing delay, seconds, that the headroom of a job reporting its backlog keeps the noise
# under: the SLO example of seed 002 (§5.3) and the latency bound of its threshold rule.
LATENCY = 10.0
# Chance that the noise alone takes the delay over ``latency`` after a restart (ln(1/RISK) =
# 6.9), by default: one in a thousand, since a second over the SLA may cost tens of
# operator-seconds. A larger risk buys fewer instances with late seconds (docs/baselines.md).
RISK = 0.001
# Seconds looked ahead along the level's slope beyond the restart the Scaler measures: none by
# default, so that a rising level is provisioned for where it will be when a decision made now
# has added capacity (the actuation delay and restart), and no further. (30 s was also tried on
# the compare grid and was no cheaper once scale-ups were sized by ``recovery``.)
LEAD = 0.0
# Seconds a scaling operation is assumed to stop processing until the Scaler has watched one.
RESTART = 8.0


class ThresholdPolicy:
    """Operators needed for a volume, when each operator handles ``capacity`` tuples/s.

    .. math:: n(v) = \\min(\\max(n_{\\min}, \\lceil v / c - 10^{-9} \\rceil), n_{\\max})

    with :math:`c` = ``capacity``, :math:`n_{\\min}` = ``min_operators`` and :math:`n_{\\max}` =
    ``max_operators`` (no upper bound when ``None``). The :math:`10^{-9}` absorbs floating-point
    rounding of :math:`v / c`, so an exact multiple of the capacity needs exactly that many
    operators; a volume above :math:`k c` by less than :math:`10^{-9} c` needs :math:`k`.

    What the Scaler asks ``needed`` for is the **demand** (``demand``): the filtered volume,
    plus the backlog drained over ``catch_up`` seconds, over the ``utilisation`` target,

    .. math:: d = (\\bar v + b / T_{\\text{catch-up}}) / u

    so a job that fell behind gets the capacity to catch up (the Flink autoscaler's target rate
    plus lag over catch-up duration), and headroom is a utilisation target (the HPA's 70 %).
    For a job that reports its backlog (a queue), the Scaler also gives the arrivals' noise,
    the level's slope and the measured restart time, and the demand becomes

    .. math:: d = (\\bar v + \\max(0, \\dot v) (t_{\\text{lead}} + P) + h
              + b / T_{\\text{catch-up}}) / u

    a look-ahead along a rising level by the time a decision takes to add capacity, and the
    ``headroom`` :math:`h` that keeps the noise from taking the queueing delay over
    ``latency``.

    The policy is pure: it holds only its settings and depends on nothing else.

    Parameters
    ----------
    capacity
        Volume one operator handles, tuples/s; a finite number > 0.
    min_operators
        Fewest operators, an integer >= 0; 0 lets an idle job scale to zero.
    max_operators
        Most operators, an integer >= ``min_operators``, or ``None`` for no limit.
    utilisation
        Share of an operator's capacity to plan for, a number in (0, 1]; 1 plans no headroom.
    quiet
        Seconds after each scaling operation during which a sample that reports a backlog
        neither scales up for that backlog nor scales down, a number >= 0 (default 60).
    quiet_weight
        Weight of a volume sample taken within ``quiet`` seconds after a scaling operation, a
        number in [0, 1] (``quiet_volume``): 1 (the default) filters it as any other sample, 0
        ignores it (the filtered level holds), a weight between down-weights it.
    catch_up
        Seconds in which a reported backlog should be drained, a number > 0 (default 300, the
        catch-up duration of the Flink autoscaler's documented examples), or ``None`` to ignore
        backlogs. Only samples that report a backlog are affected.
    latency
        Queueing delay, seconds (> 0, default 10), that the headroom keeps the noise under, with
        chance ``risk`` of failing; ``None``: no headroom for noise.
    lead
        Seconds (>= 0, default 0) to look ahead along a rising level beyond the restart the
        Scaler measures (e.g. a known provisioning delay that the job does not report); a
        scale-up is also sized for the backlog it finds after at least this long (or the
        delay from decision to ``running`` the Scaler measured, if longer).
    restart
        Seconds (>= 0) a scaling operation is assumed to stop processing until the Scaler has
        measured one from what the job reports (Flink's ``job.autoscaler.restart.time``).
    risk
        Chance, in (0, 1] (default 0.001), that the noise takes the queueing delay over
        ``latency`` despite the headroom (``headroom``): smaller keeps more capacity spare,
        larger trades late seconds for instances; 1 plans no headroom for the noise.

    Integral floats (``2.0``) are accepted for the counts and stored as ``int``.

    >>> policy = ThresholdPolicy(capacity=50.0)
    >>> [policy.needed(v) for v in (0.0, 49.9, 50.0, 100.0, 100.1)]
    [1, 1, 1, 2, 3]
    >>> ThresholdPolicy(capacity=50.0, min_operators=0, max_operators=4).needed(1000.0)
    4
    >>> ThresholdPolicy(**policy.spec) == policy
    True
    """

    def __init__(
        self,
        capacity: float,
        min_operators: int = 1,
        max_operators: int | None = None,
        utilisation: float = 1.0,
        catch_up: float | None = CATCH_UP,
        quiet: float = QUIET,
        latency: float | None = LATENCY,
        lead: float = LEAD,
        restart: float = RESTART,
        quiet_weight: float = QUIET_WEIGHT,
        risk: float = RISK,
    ) -> None:
        owner = type(self).__name__
        check_number(owner, "capacity", capacity, minimum=0, exclusive_minimum=True)
        check_number(owner, "min_operators", min_operators, minimum=0, integer=True)
        if max_operators is not None:
            check_number(owner, "max_operators", max_operators, minimum=min_operators, integer=True)
        check_number(
            owner, "utilisation", utilisation, minimum=0, maximum=1, exclusive_minimum=True
        )
        if catch_up is not None:
            check_number(owner, "catch_up", catch_up, minimum=0, exclusive_minimum=True)
        check_number(owner, "quiet", quiet, minimum=0)
        check_number(owner, "quiet_weight", quiet_weight, minimum=0, maximum=1)
        if latency is not None:
            check_number(owner, "latency", latency, minimum=0, exclusive_minimum=True)
        check_number(owner, "lead", lead, minimum=0)
        check_number(owner, "restart", restart, minimum=0)
        check_number(owner, "risk", risk, minimum=0, maximum=1, exclusive_minimum=True)
        self.capacity = float(capacity)
        self.min_operators = int(min_operators)
        self.max_operators = None if max_operators is None else int(max_operators)
        self.utilisation = float(utilisation)
        self.catch_up = None if catch_up is None else float(catch_up)
        self.quiet = float(quiet)
        self.quiet_weight = float(quiet_weight)
        self.latency = None if latency is None else float(latency)
        self.lead = float(lead)
        self.restart = float(restart)
        self.risk = float(risk)

    @classmethod
    def from_settings(cls, settings: object) -> ThresholdPolicy:
        """The policy of a Scaler spec's ``"policy"``, or ``ValueError`` saying what is allowed.

        >>> ThresholdPolicy.from_settings({"capacity": 50.0, "max_operators": 8}).max_operators
        8
        """
        allowed = list(inspect.signature(cls).parameters)
        if not isinstance(settings, dict):
            allowed_policy = f"policy must be a dict of {allowed} (capacity is required)"
            reject("Scaler", "policy", settings, allowed_policy)
        unknown = sorted(set(settings) - set(allowed))
        if unknown:
            field = f"policy.{unknown[0]}"
            reject("Scaler", field, settings[unknown[0]], f"allowed parameters: {allowed}")
        if "capacity" not in settings:
            reject("Scaler", "policy.capacity", None, "capacity is required: a number > 0")
        return cls(**settings)

    def demand(
        self,
        filtered: float,
        backlog: float | None = None,
        *,
        noise: float | None = None,
        slope: float | None = None,
        restart: float = 0.0,
    ) -> float:
        """The volume to provision for, tuples/s (see the class docstring).

        ``backlog`` (tuples) is drained over ``catch_up``; ``slope`` (tuples/s per second) is
        looked ahead along for ``lead + restart`` seconds when positive; ``noise`` (the
        arrivals' per-second deviation, tuples/s) adds ``headroom``; ``restart`` is the seconds
        a scaling operation takes to add capacity. Each is left out when ``None`` (``restart``:
        0).

        >>> ThresholdPolicy(capacity=50.0, utilisation=0.8, catch_up=60.0).demand(300.0, 1200.0)
        400.0
        >>> policy = ThresholdPolicy(capacity=50.0, lead=20.0)
        >>> policy.demand(300.0, slope=0.5, restart=10.0)  # 300 + 0.5 x (20 + 10)
        315.0
        """
        if slope is not None and slope > 0.0:
            filtered += slope * (self.lead + restart)
        if noise is not None:
            filtered += self.headroom(filtered, noise, restart)
        if backlog and self.catch_up is not None:
            filtered += backlog / self.catch_up
        return filtered / self.utilisation

    def headroom(
        self,
        volume: float,
        noise: float,
        restart: float = 0.0,
        backlog: float = 0.0,
        restarting: bool = False,
    ) -> float:
        """Spare capacity h, tuples/s, that keeps a noisy queue's delay under ``latency``.

        Arrivals of mean :math:`v` = ``volume`` and per-second deviation :math:`\\sigma` =
        ``noise`` served at :math:`C = v + h` make the backlog a random walk drifting down by
        :math:`h` per second. A scaling operation stops processing for :math:`P` = ``restart``
        seconds, leaving a backlog of about :math:`P v` on top of the :math:`B` = ``backlog``
        it found; the delay exceeds :math:`L` = ``latency`` once the backlog reaches
        :math:`L C`. A Brownian motion with drift :math:`-h` and variance :math:`\\sigma^2` per
        second ever climbs by :math:`x` with probability :math:`e^{-2 h x / \\sigma^2}`;
        setting that to ``risk`` for :math:`x = L(v + h) - P v - B` gives

        .. math:: L h^2 + ((L - P) v - B) h = \\sigma^2 \\ln(1/\\text{risk}) / 2

        whose positive root is returned (with :math:`P = 0`, the stationary tail of the
        reflected walk, :math:`P(B > LC) = \\text{risk}`). It grows with the noise's variance,
        shrinks with the load (a large stage absorbs the same burst in less time), and covers
        the restart's own backlog (:math:`(P - L) v / L` when :math:`P > L`, even without
        noise). 0 with ``latency=None``.

        With ``restarting=True`` (an operation being made now, ``recovery``) the noise that
        arrives during the restart counts too: the restart ends with a backlog
        :math:`Z \\sim N(0, P \\sigma^2)` above :math:`B + P v`, and averaging the climb's
        probability over it, :math:`E[e^{-2h(x - Z)/\\sigma^2}] = e^{-2h(x - hP)/\\sigma^2}`,
        leaves :math:`x - hP = (L - P)(v + h) - B` of room:

        .. math:: (L - P) h^2 + ((L - P) v - B) h = \\sigma^2 \\ln(1/\\text{risk}) / 2

        (for :math:`P < L`; a restart as long as the latency is late whatever the capacity, and
        the headroom is then the one without that term).

        >>> policy = ThresholdPolicy(capacity=50.0)
        >>> round(policy.headroom(400.0, 114.0), 1), round(policy.headroom(400.0, 114.0, 8.0), 1)
        (10.9, 38.0)
        >>> policy.headroom(400.0, 0.0, 8.0), policy.headroom(400.0, 0.0, 12.0)
        (0.0, 80.0)
        >>> round(policy.headroom(400.0, 114.0, 8.0, backlog=800.0), 1)  # the restart uses all L
        67.0
        >>> round(policy.headroom(400.0, 114.0, 8.0, restarting=True), 1)
        49.9
        """
        if self.latency is None:
            return 0.0
        latency, volume = self.latency, max(volume, 0.0)
        spread = -noise * noise * math.log(self.risk) / 2.0  # ln(1/risk), finite for any risk
        slack = (latency - restart) * volume - max(backlog, 0.0)
        # The coefficient of h^2: the latency, less the restart when its own noise counts.
        room = latency - restart if restarting and restart < latency else latency
        return (math.sqrt(slack * slack + 4.0 * room * spread) - slack) / (2.0 * room)

    def recovery(
        self, backlog: float, volume: float, restart: float = 0.0, noise: float = 0.0
    ) -> float:
        """The volume whose capacity serves an operation's backlog and restart within latency.

        An operation finds ``backlog`` tuples waiting and piles up ``restart × volume`` more
        while it restarts; the new capacity must drain both without the noise, during the
        restart and after it, taking the delay over the latency: the ``volume`` plus its
        ``headroom`` with that backlog, ``restarting=True``,

        .. math:: d_{\\text{recovery}} = (v + h(v, \\sigma, P, B)) / u

        Without noise that is :math:`\\max(v, B / (L - P)) / u`: the tuples waiting when the
        restart begins are late unless :math:`(L - P) C \\ge B` (``restart_room``), which
        also drains them and the restart's :math:`P v` within :math:`L` after it. (For
        :math:`P \\ge L` every restart is late; then :math:`\\max(v, (B + P v) / L) / u`.)
        The Scaler sizes every operation of a job that reports its backlog with it: a scale-up
        at least that big, a scale-down no lower (it starts none). 0 with ``latency=None``.

        >>> policy = ThresholdPolicy(capacity=50.0)
        >>> policy.recovery(2000.0, 400.0, restart=8.0)  # 2000 / (10 - 8)
        1000.0
        >>> policy.recovery(600.0, 400.0, restart=8.0)  # 600 / 2 = 300 < 400: the level
        400.0
        >>> round(policy.recovery(600.0, 400.0, restart=8.0, noise=114.0), 1)
        507.9
        >>> policy.recovery(2000.0, 400.0, restart=12.0)  # (2000 + 12 x 400) / 10
        680.0
        """
        if self.latency is None:
            return 0.0
        volume = max(volume, 0.0)
        headroom = self.headroom(volume, noise, restart, backlog, restarting=True)
        return (volume + headroom) / self.utilisation

    def restart_room(self, operators: int, restart: float) -> float:
        """The backlog, tuples, that a restart to ``operators`` can find without a late tuple.

        A restart stops processing for ``restart`` seconds (:math:`P`), so a tuple waiting when
        it starts is delayed by :math:`P` plus the backlog ahead of it drained at the new
        capacity :math:`n c`: under ``latency`` while the backlog is at most
        :math:`(L - P) n c`. ``inf`` with ``latency=None``.

        >>> ThresholdPolicy(capacity=50.0).restart_room(8, restart=8.0)  # 2 s of 400 tuples/s
        800.0
        """
        if self.latency is None:
            return math.inf
        return max(self.latency - restart, 0.0) * operators * self.capacity

    def quiet_volume(self, volume: float, level: float | None, since: float | None) -> float | None:
        """What the filter is given of a sample ``volume`` taken ``since`` seconds after the last
        scaling operation, when the filtered ``level`` was ``level``: ``None`` to ignore it.

        Within the ``quiet`` period the sample counts for ``quiet_weight``: the filter sees the
        level moved that share of the way to it (all of it at 1; at 0 the sample is ignored).
        Outside it, after no operation yet, or with no level yet, the sample itself.

        >>> policy = ThresholdPolicy(capacity=50.0, quiet_weight=0.25)
        >>> policy.quiet_volume(900.0, 500.0, since=10.0), policy.quiet_volume(900.0, 500.0, 60.0)
        (600.0, 900.0)
        >>> ThresholdPolicy(capacity=50.0, quiet_weight=0).quiet_volume(900.0, 500.0, 10.0) is None
        True
        """
        if level is None or since is None or since >= self.quiet:
            return volume
        if self.quiet_weight == 0.0:
            return None
        return level + self.quiet_weight * (volume - level)

    def needed(self, volume: float) -> int:
        """Operators needed for ``volume`` (tuples/s, finite), within the bounds."""
        check_number(type(self).__name__, "volume", volume)
        return self.clamp(math.ceil(volume / self.capacity - ROUNDING_TOLERANCE))

    def clamp(self, operators: int) -> int:
        """``operators`` brought into ``[min_operators, max_operators]``.

        >>> ThresholdPolicy(capacity=50.0, min_operators=2, max_operators=5).clamp(9)
        5
        """
        operators = max(self.min_operators, operators)
        return operators if self.max_operators is None else min(operators, self.max_operators)

    @property
    def spec(self) -> dict[str, Any]:
        """The settings as a JSON-ready dict; ``ThresholdPolicy(**spec)`` rebuilds the policy.

        ``utilisation`` and ``catch_up`` appear only when they differ from their defaults.
        """
        spec: dict[str, Any] = {
            "capacity": self.capacity,
            "min_operators": self.min_operators,
            "max_operators": self.max_operators,
        }
        # Left out at their defaults, so that specs (and the states stored with them) written
        # before these settings existed still compare equal.
        if self.utilisation != 1.0:
            spec["utilisation"] = self.utilisation
        if self.catch_up != CATCH_UP:
            spec["catch_up"] = self.catch_up
        if self.quiet != QUIET:
            spec["quiet"] = self.quiet
        if self.latency != LATENCY:
            spec["latency"] = self.latency
        if self.lead != LEAD:
            spec["lead"] = self.lead
        if self.restart != RESTART:
            spec["restart"] = self.restart
        if self.quiet_weight != QUIET_WEIGHT:
            spec["quiet_weight"] = self.quiet_weight
        if self.risk != RISK:
            spec["risk"] = self.risk
        return spec

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ThresholdPolicy) and other.spec == self.spec

    def __repr__(self) -> str:
        params = ", ".join(f"{key}={value!r}" for key, value in self.spec.items())
        return f"{type(self).__name__}({params})"
