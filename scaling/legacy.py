"""Specs and states stored before the cost model, mapped to what it decides with.

Until the cost model (scaling/cost.py), a policy planned its headroom with a utilisation target
and a ``risk``, drained backlogs over ``catch_up`` seconds, held operations for ``quiet``
seconds, down-weighted samples within them (``quiet_weight``) and looked ``lead`` seconds ahead.
A stored stream keeps loading and deciding; its settings map as follows (docs/baselines.md,
"Specs from before the model"):

========================  ==============================================================
``utilisation`` u < 1      ``capacity`` × u: planning for a share of an operator is planning
                           with a smaller operator
``risk`` r                 ``late_probability`` r: the chance of a delay over the latency
``catch_up`` (a number)    dropped: the model prices the backlog left at the horizon
``quiet``, ``lead``        dropped: the model knows the restart and the actuation delay
``quiet_weight`` 1         dropped (every sample counts, as before)
``latency`` (a number)     kept
========================  ==============================================================

Settings that asked for what the model cannot do are refused at load, naming the setting:
``catch_up: null`` (ignore backlogs), ``latency: null`` (no latency) and ``quiet_weight`` < 1
(ignore samples after an operation). Nothing is changed silently: the mapping is this table.
"""

from __future__ import annotations

from typing import Any

from filters.base import reject

_DROPPED = ("catch_up", "quiet", "lead", "quiet_weight")


def mapped_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """A policy's settings with those from before the cost model mapped (see the module).

    >>> mapped_settings({"capacity": 50.0, "utilisation": 0.8, "risk": 0.01, "quiet": 30})
    {'capacity': 40.0, 'late_probability': 0.01}
    >>> mapped_settings({"capacity": 50.0, "catch_up": None})
    Traceback (most recent call last):
    ...
    filters.configurable.ParameterError: Scaler: policy.catch_up=None is not allowed: ...
    """
    legacy = {"utilisation", "risk", *_DROPPED} & set(settings)
    if not legacy and settings.get("latency", 0) is not None:
        return settings
    mapped = {key: value for key, value in settings.items() if key not in legacy}
    refusals = {
        "catch_up": (
            None,
            "null (ignore backlogs) cannot be mapped: the model always prices "
            "a backlog; remove catch_up",
        ),
        "latency": (None, "null cannot be mapped: the model needs a latency in seconds > 0"),
    }
    for name, (value, allowed) in refusals.items():
        if name in settings and settings[name] is value:
            reject("Scaler", f"policy.{name}", value, allowed)
    weight = settings.get("quiet_weight", 1)
    if weight != 1:
        reject(
            "Scaler",
            "policy.quiet_weight",
            weight,
            "only 1 can be mapped: the model uses every sample; remove quiet_weight",
        )
    utilisation = settings.get("utilisation", 1.0)
    if utilisation != 1.0:
        capacity = settings.get("capacity")
        if not (
            isinstance(capacity, int | float)
            and isinstance(utilisation, int | float)
            and 0 < utilisation <= 1
        ):
            reject("Scaler", "policy.utilisation", utilisation, "a number in (0, 1] with capacity")
        mapped["capacity"] = float(capacity) * float(utilisation)
    if "risk" in settings:
        if settings.get("late_probability") is not None:
            reject(
                "Scaler",
                "policy.risk",
                settings["risk"],
                "risk maps to late_probability, which the spec states too: keep one",
            )
        mapped["late_probability"] = settings["risk"]
    return mapped
