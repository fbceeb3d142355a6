"""Threshold policy, guards and the Scaler: filtered volume in, operator count out.

>>> from filters import make_filter
>>> from scaling import Scaler, ThresholdPolicy
>>> scaler = Scaler(make_filter("raw"), ThresholdPolicy(capacity=50.0), operators=1)
>>> scaler.observe(312.4, t=0.0).reason
'filtered 312.4 needs 7 > 1'
"""

from __future__ import annotations

from scaling.decision import Action, Decision
from scaling.guards import (
    Confidence,
    Cooldown,
    Guard,
    Hysteresis,
    MaxStep,
    Stabilization,
    available_guards,
    make_guard,
)
from scaling.policy import ThresholdPolicy
from scaling.scaler import Scaler
from scaling.scaler_state import same_spec
from scaling.spec import default_spec

__all__ = [
    "Action",
    "Confidence",
    "Cooldown",
    "Decision",
    "Guard",
    "Hysteresis",
    "MaxStep",
    "Scaler",
    "Stabilization",
    "ThresholdPolicy",
    "available_guards",
    "default_spec",
    "make_guard",
    "same_spec",
]
