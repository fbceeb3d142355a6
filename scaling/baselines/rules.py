"""The rule policies of seed 000 (Rouaux 2014): triggers held for a duration, then a step.

A policy is a list of rules; each rule, written as a JSON-ready dict, reads like the thesis's
Java DSL (``rule(...).scaleOut(...).by(absolute(2)).butNeverAbove(nodes(3)).when(metric(...))
.is(above(tuples(300))).forAtLeast(seconds(30)).withNoScaleOutSince(minutes(5))``)::

    {
        "name": "queue above 300 for 30 s",    # optional, for people reading the spec
        "action": "scale_out",                 # or "scale_in"
        "by": {"absolute": 2},                 # +-k instances; {"relative": k}: x k or / k
        "triggers": [                          # ANDed; "above" (>) or "below" (<), seconds
            {"metric": "backlog", "above": 300.0, "for_at_least": 30.0},
        ],
        "limit": {"nodes": 3},                 # optional: never above (out) / below (in) n;
                                               #   {"factor": x}: x times the original size
        "no_scale_out_since": 300.0,           # optional guard times, seconds
        "no_scale_in_since": None,
    }

A trigger's ``metric`` is a numeric field of ``Observation``: the thesis's ``queue-length`` is
``backlog`` and its ``cpu`` is ``utilisation``, as a fraction (10 % is 0.1).

**Evaluation**, at each observation ``t`` (every ``interval`` seconds; the thesis evaluates on
each reading, 5 s apart in its SEEP setting), rule by rule in the order given:

* a trigger *holds* when the policy has observed for at least 90 % of its duration ``d``
  (``t - t_first >= 0.9 d``) and every reading younger than ``d`` (``t - t_r < d``, the
  current one included) satisfies the comparison, strictly (``>`` or ``<``);
* a guard is *clear* when the policy's last operation of its kind (scale-out or scale-in, by
  any rule) is at least that many seconds before ``t``, or has not happened;
* the rule *fires* when all its triggers hold and its guards are clear now but did not all at
  its previous observation (edge-triggered: a condition that persists acts once);
* firing computes the new size from the current one, ``n``: ``n + k`` / ``n - k`` (absolute),
  ``round(n k)`` / ``round(n / k)`` (relative, halves rounded up as Java's ``Math.round``),
  scale-in floored at 1 (the thesis forbids removing an operator). An action that breaks the
  rule's limit is skipped, not clamped, as the thesis's code does (scale-out: ``new > n_max``
  or ``new > x n_0``; scale-in: ``new < n_min`` or ``new < x n_0``, ``n_0`` = the original
  size); a skipped or size-keeping firing is not an operation and starts no guard time.

The current size is the count the policy last asked for, starting from the ``operators`` of the
first observation, which is also the original size: the thesis's adaptor keeps "a valid copy
of the state" of the system, and a simulator with an actuation delay must not see a pending
request withdrawn because the running count has not caught up yet.

**Inconsistencies of the thesis and its code** (``mrouaux/sps-monitor-framework``) resolved:

1. Window: readings younger than ``d`` (code), not ``<= d`` (pseudo-code). With 5 s readings
   only the code's reading matches the reported timings (1 -> 2 at ~90 s in §5.2.2-5.2.3,
   scale-out ~10 s into a peak in §5.2.6); "enough readings" keeps the code's 10 % tolerance.
2. Every reading in the window must satisfy the comparison (prose and code), not any one
   (pseudo-code); ``below`` is strict (code), not ``<=`` (pseudo-code).
3. The edge is taken on the rule's whole condition; the code requires every trigger to have
   changed at the same reading, so a rule whose triggers start to hold at different readings
   would never fire, contradicting "triggers are ANDed".
4. Guard times are enforced (the code parses but never reads them), per kind of operation. A
   firing a guard blocks is deferred, not lost: the guard is part of the condition whose
   rising edge fires the rule, so the rule fires when the guard expires if its triggers still
   hold ("it is also required that the last scale-out took place at least 5 minutes ago").
5. ``butNeverBelow`` is a minimum (the code builds a maximum, right only for 1).
6. Rules firing at one observation act in order, each on the size the previous left, as the
   code's rules do through its stateful adaptor.
7. §5.2.6's prose mentions "no scale-out action during the last 60 seconds", which its code
   does not have; nothing adds it.

Operator ids and wildcards are not modelled: a policy scales the one stage it observes, and a
chain of operators runs one policy per stage (§5.2.4 in ``tests/scaling/baselines``).

>>> from scaling.baselines import Observation, make_policy
>>> policy = RulePolicy([{
...     "action": "scale_out", "by": {"absolute": 2}, "limit": {"nodes": 3},
...     "triggers": [{"metric": "backlog", "above": 300.0, "for_at_least": 30.0}],
... }])
>>> def seen(t: float) -> Observation:  # §5.2.3 before any scaling: 10 tuples/s in, 5 out
...     return Observation(t=t, period=5.0, operators=1, arrival_rate=10.0, processed_rate=5.0,
...                        capacity=5.0, utilisation=1.0, backlog=5.0 * t, backlog_rate=5.0,
...                        backpressure=0.0)
>>> sizes = {t: policy.decide(seen(t)) for t in range(5, 100, 5)}
>>> sizes[60], sizes[85], sizes[90], sizes[95]
(1, 1, 3, 3)
>>> make_policy(policy.spec) == policy
True
"""

from __future__ import annotations

import copy
import math
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from filters.base import Configurable, ParameterError, check_choice, check_number, reject
from scaling.baselines.observation import Observation

_OWNER = "RulePolicy"
_ACTIONS = ("scale_out", "scale_in")
_METRICS = tuple(f.name for f in fields(Observation) if f.name not in ("t", "period"))
_RULE_KEYS = (
    "name",
    "action",
    "by",
    "triggers",
    "limit",
    "no_scale_out_since",
    "no_scale_in_since",
)
_TRIGGER_KEYS = ("metric", "above", "below", "for_at_least")
# The code counts a trigger's history as long enough at 90 % of its duration, so that readings
# a little late (timestamps jitter) do not hold a rule back for one more reading.
_HISTORY_TOLERANCE = 0.1

# The thesis's canonical example (Source Code 4.6): double on a queue above 1,000 tuples for
# 5 minutes, halve on an empty queue for 5 minutes; no limit.
CANONICAL_RULES: tuple[dict[str, Any], ...] = (
    {
        "name": "Queue length is above 1000 for 5 minutes",
        "action": "scale_out",
        "by": {"relative": 2.0},
        "triggers": [{"metric": "backlog", "above": 1000.0, "for_at_least": 300.0}],
    },
    {
        "name": "Queue length is below 1 for 5 minutes",
        "action": "scale_in",
        "by": {"relative": 2.0},
        "triggers": [{"metric": "backlog", "below": 1.0, "for_at_least": 300.0}],
    },
)


@dataclass(frozen=True)
class _Trigger:
    metric: str
    above: bool
    threshold: float
    duration: float

    def satisfied(self, reading: Observation) -> bool:
        value: float = getattr(reading, self.metric)
        return value > self.threshold if self.above else value < self.threshold


@dataclass(frozen=True)
class _Rule:
    out: bool
    relative: bool
    factor: float
    triggers: tuple[_Trigger, ...]
    limit: float | None
    limit_relative: bool
    guards: tuple[tuple[str, float], ...]  # (kind of the last operation, seconds)


class RulePolicy(Configurable):
    """Seed 000's rule policies with guard times enforced (see the module docstring).

    Parameters
    ----------
    rules
        Rule dicts as above, evaluated in order; by default the thesis's canonical example.
        An empty list never scales ("an empty policy has no effect").
    interval
        Seconds between two observations (> 0); 5 s, the ``monitorInterval`` of the code.

    ``rules`` is stored normalised: every key present, counts as ``int`` and the rest of the
    numbers as ``float``, so ``spec`` compares and round-trips exactly.
    """

    name = "rules"

    def __init__(
        self, rules: Sequence[Mapping[str, Any]] = CANONICAL_RULES, interval: float = 5.0
    ) -> None:
        check_number(_OWNER, "interval", interval, minimum=0, exclusive_minimum=True)
        if isinstance(rules, str | Mapping) or not isinstance(rules, Sequence):
            reject(_OWNER, "rules", rules, "rules must be a list")
        self.rules = [_normalise(index, rule) for index, rule in enumerate(rules)]
        self.interval = float(interval)
        self._rules = [_parse(rule) for rule in self.rules]
        durations = [trigger.duration for rule in self._rules for trigger in rule.triggers]
        self._longest = max(durations, default=0.0)
        self._history: deque[Observation] = deque()
        self._first: float | None = None  # time of the first observation
        self._previous = 0.0  # time of the last one
        self._operators = self._original = 0
        self._active = [False] * len(self._rules)
        self._last: dict[str, float] = {}  # kind of operation -> time of the last one

    def decide(self, observation: Observation) -> int:
        t = observation.t
        if self._first is None:
            self._first = t
            self._operators = self._original = observation.operators
        elif not t > self._previous:
            reject(_OWNER, "t", t, f"t must be greater than the previous t={self._previous!r}")
        self._previous = t
        self._history.append(observation)
        while self._history and t - self._history[0].t >= self._longest:
            self._history.popleft()
        for index, rule in enumerate(self._rules):
            active = self._clear(rule, t) and all(
                self._holds(trigger, t - self._first) for trigger in rule.triggers
            )
            if active and not self._active[index]:
                self._fire(rule, t)
            self._active[index] = active
        return self._operators

    def _holds(self, trigger: _Trigger, observed: float) -> bool:
        if observed < (1.0 - _HISTORY_TOLERANCE) * trigger.duration:
            return False
        t = self._history[-1].t
        for reading in reversed(self._history):
            if t - reading.t >= trigger.duration:
                break
            if not trigger.satisfied(reading):
                return False
        return True

    def _clear(self, rule: _Rule, t: float) -> bool:
        return all(
            kind not in self._last or t - self._last[kind] >= seconds
            for kind, seconds in rule.guards
        )

    def _fire(self, rule: _Rule, t: float) -> None:
        current = self._operators
        if rule.relative:
            scaled = current * rule.factor if rule.out else current / rule.factor
            new = math.floor(scaled + 0.5)
        else:
            new = current + int(rule.factor) if rule.out else current - int(rule.factor)
        new = new if rule.out else max(new, 1)
        if rule.limit is not None:
            bound = rule.limit * self._original if rule.limit_relative else rule.limit
            if new > bound if rule.out else new < bound:
                return
        if new != current:
            self._operators = new
            self._last["scale_out" if rule.out else "scale_in"] = t

    @property
    def spec(self) -> dict[str, Any]:
        """The settings as a JSON-ready dict; ``make_policy(spec)`` rebuilds an equal policy."""
        return {"name": self.name, "rules": copy.deepcopy(self.rules), "interval": self.interval}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RulePolicy) and other.spec == self.spec


def _normalise(index: int, rule: object) -> dict[str, Any]:
    """The rule with every key, checked; ``ValueError`` names the field, value and allowed."""
    where = f"rules[{index}]"
    if not isinstance(rule, Mapping):
        reject(_OWNER, where, rule, "a rule must be a dict")
    _known_keys(where, rule, _RULE_KEYS)
    name = rule.get("name", "")
    if not isinstance(name, str):
        reject(_OWNER, f"{where}.name", name, "it must be a string")
    check_choice(_OWNER, f"{where}.action", rule.get("action"), _ACTIONS)
    kind, factor = _one_of(f"{where}.by", rule.get("by"), ("absolute", "relative"))
    if kind == "absolute":
        check_number(_OWNER, f"{where}.by.absolute", factor, minimum=1, integer=True)
    else:
        check_number(_OWNER, f"{where}.by.relative", factor, minimum=1, exclusive_minimum=True)
    triggers = rule.get("triggers")
    if isinstance(triggers, str | Mapping) or not isinstance(triggers, Sequence) or not triggers:
        reject(
            _OWNER, f"{where}.triggers", triggers, "it must be a non-empty list of trigger dicts"
        )
    limit = rule.get("limit")
    if limit is not None:
        limit_kind, bound = _one_of(f"{where}.limit", limit, ("nodes", "factor"))
        if limit_kind == "nodes":
            check_number(_OWNER, f"{where}.limit.nodes", bound, minimum=1, integer=True)
        else:
            check_number(_OWNER, f"{where}.limit.factor", bound, minimum=0, exclusive_minimum=True)
        limit = {limit_kind: int(bound) if limit_kind == "nodes" else float(bound)}
    guards = {}
    for key in ("no_scale_out_since", "no_scale_in_since"):
        seconds = rule.get(key)
        if seconds is not None:
            check_number(_OWNER, f"{where}.{key}", seconds, minimum=0)
        guards[key] = None if seconds is None else float(seconds)
    return {
        "name": name,
        "action": rule["action"],
        "by": {kind: int(factor) if kind == "absolute" else float(factor)},
        "triggers": [
            _normalise_trigger(f"{where}.triggers[{i}]", t) for i, t in enumerate(triggers)
        ],
        "limit": limit,
        **guards,
    }


def _normalise_trigger(where: str, trigger: object) -> dict[str, Any]:
    if not isinstance(trigger, Mapping):
        reject(_OWNER, where, trigger, "a trigger must be a dict")
    _known_keys(where, trigger, _TRIGGER_KEYS)
    check_choice(_OWNER, f"{where}.metric", trigger.get("metric"), _METRICS)
    comparisons = [key for key in ("above", "below") if key in trigger]
    if len(comparisons) != 1:
        reject(_OWNER, where, dict(trigger), "a trigger needs exactly one of 'above' and 'below'")
    comparison = comparisons[0]
    threshold = trigger[comparison]
    check_number(_OWNER, f"{where}.{comparison}", threshold)
    check_number(
        _OWNER,
        f"{where}.for_at_least",
        trigger.get("for_at_least"),
        minimum=0,
        exclusive_minimum=True,
    )
    return {
        "metric": trigger["metric"],
        comparison: float(threshold),
        "for_at_least": float(trigger["for_at_least"]),
    }


def _parse(rule: dict[str, Any]) -> _Rule:
    """The evaluator's form of a normalised rule."""
    ((kind, factor),) = rule["by"].items()
    limit_kind, bound = next(iter((rule["limit"] or {}).items()), (None, None))
    guards = (("scale_out", rule["no_scale_out_since"]), ("scale_in", rule["no_scale_in_since"]))
    return _Rule(
        out=rule["action"] == "scale_out",
        relative=kind == "relative",
        factor=factor,
        triggers=tuple(
            _Trigger(
                metric=trigger["metric"],
                above="above" in trigger,
                threshold=trigger["above" if "above" in trigger else "below"],
                duration=trigger["for_at_least"],
            )
            for trigger in rule["triggers"]
        ),
        limit=bound,
        limit_relative=limit_kind == "factor",
        guards=tuple((key, seconds) for key, seconds in guards if seconds is not None),
    )


def _known_keys(where: str, given: Mapping[str, Any], allowed: Sequence[str]) -> None:
    unknown = sorted(str(key) for key in set(given) - set(allowed))
    if unknown:
        raise ParameterError(
            f"{_OWNER}: {where} has the unknown key {unknown[0]!r}; allowed keys: {list(allowed)}",
            param=f"{where}.{unknown[0]}",
            value=next(value for key, value in given.items() if str(key) == unknown[0]),
            allowed=f"allowed keys: {list(allowed)}",
        )


def _one_of(where: str, value: object, keys: Sequence[str]) -> tuple[str, Any]:
    """The single ``key: value`` pair of a dict that must hold exactly one of ``keys``."""
    if isinstance(value, Mapping) and len(value) == 1 and next(iter(value)) in keys:
        ((key, item),) = value.items()
        return str(key), item
    allowed = " or ".join(f"{{{key!r}: ...}}" for key in keys)
    reject(_OWNER, where, value, f"it must be {allowed}")
