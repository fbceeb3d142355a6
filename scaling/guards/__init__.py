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

from typing import Any

from filters.base import Registry
from scaling.guards.base import Guard
from scaling.guards.confidence import Confidence
from scaling.guards.cooldown import Cooldown
from scaling.guards.hysteresis import Hysteresis
from scaling.guards.max_step import MaxStep
from scaling.guards.stabilization import Stabilization

GUARDS: Registry[Guard] = Registry(
    "guard", (Confidence, Cooldown, Hysteresis, Stabilization, MaxStep)
)


def available_guards() -> list[str]:
    """Names accepted by ``make_guard``, sorted."""
    return GUARDS.names()


def make_guard(spec: str | dict[str, Any], **params: Any) -> Guard:
    """Build a guard from its name and settings, or from a spec dict.

    ``make_guard("cooldown", up=30, down=120)`` and
    ``make_guard({"name": "cooldown", "up": 30, "down": 120})`` are the same guard;
    ``make_guard(g.spec)`` rebuilds ``g``'s settings (not its state). Unknown names and settings
    raise ``ValueError`` saying what is allowed.

    >>> make_guard({"name": "cooldown", "up": 30, "down": 120}).spec
    {'name': 'cooldown', 'up': 30.0, 'down': 120.0}
    """
    return GUARDS.build(spec, **params)


__all__ = [
    "GUARDS",
    "Confidence",
    "Cooldown",
    "Guard",
    "Hysteresis",
    "MaxStep",
    "Stabilization",
    "available_guards",
    "make_guard",
]
