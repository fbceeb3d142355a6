"""The learned state of a ``ChangePoint``, checked value by value when it is loaded.

A state edited or corrupted in storage is refused instead of producing nonsense. The
periodogram's window and mean travel as base64 of little-endian int32 and float32 (compact:
the service stores the state with every batch).
"""

from __future__ import annotations

import base64
import binascii
from array import array
from typing import Any, NoReturn

import numpy as np

from filters.noise import _is_finite_number
from filters.seasonality import WINDOW, WINDOWS

# State fields that may be negative.
SIGNED = ("_level", "_recent_level", "_drift", "_residual", "_covariance")


def packed(values: np.ndarray) -> str:
    """``values``' bytes as base64 text."""
    return base64.b64encode(values.tobytes()).decode("ascii")


def packed_cycle(state: dict[str, Any], residuals: array[int], power: np.ndarray) -> dict[str, Any]:
    """``state`` with the periodogram's window and mean as base64 of little-endian int32 and
    float32."""
    state["_cycle_residuals"] = packed(np.asarray(residuals, dtype="<i4"))
    state["_cycle_power"] = packed(power.astype("<f4"))
    return state


def unpacked(text: Any, dtype: str) -> np.ndarray | None:
    """The array ``packed`` wrote, or None if ``text`` is not one."""
    if not isinstance(text, str):
        return None
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    if len(raw) % np.dtype(dtype).itemsize:
        return None
    return np.frombuffer(raw, dtype=dtype)


def check_state(values: dict[str, Any], *, recent: int, to_sigma: float) -> dict[str, Any]:
    """``values`` with the periodogram's window and mean unpacked; raises ``ValueError``
    unless they can be the learned state of a ChangePoint that keeps at most ``recent``
    samples and turns its mean absolute difference into a deviation with ``to_sigma``."""

    def refuse(field: str, rule: str) -> NoReturn:
        raise ValueError(f"changepoint: {field}={values[field]!r} is not allowed: {rule}")

    sequences = ("_previous", "_recent", "_recent_weights", "_cycle_residuals", "_cycle_power")
    numbers = [key for key in values if key not in sequences]
    for field in numbers:
        if not _is_finite_number(values[field]):
            refuse(field, "it must be a finite number")
    for field in numbers:
        if field not in SIGNED and values[field] < 0:
            refuse(field, "it must be >= 0")
    if values["_previous"] is not None and not _is_finite_number(values["_previous"]):
        refuse("_previous", "it must be null or a finite number")
    kept = values["_recent"]
    if not isinstance(kept, list) or len(kept) > recent or not all(map(_is_finite_number, kept)):
        refuse("_recent", f"it must be a list of at most {recent} finite numbers")
    weights = values["_recent_weights"]
    if (
        not isinstance(weights, list)
        or len(weights) != len(kept)
        or not all(_is_finite_number(w) and w > 0 for w in weights)
    ):
        refuse("_recent_weights", "it must be a list of finite numbers > 0, one per _recent")
    residuals = unpacked(values["_cycle_residuals"], "<i4")
    if residuals is None or len(residuals) >= WINDOW:
        refuse("_cycle_residuals", f"it must be base64 of fewer than {WINDOW} little-endian int32")
    if len(residuals) and not values["_cycle_step"] > 0.0:
        refuse("_cycle_step", "it must be > 0 while the window holds residuals")
    power = unpacked(values["_cycle_power"], "<f4")
    if (
        power is None
        or len(power) != WINDOW // 2 + 1
        or not bool(np.all(np.isfinite(power) & (power >= 0.0)))
    ):
        refuse(
            "_cycle_power",
            f"it must be base64 of {WINDOW // 2 + 1} little-endian float32, finite and >= 0",
        )
    if values["_cycle_windows"] > WINDOWS or values["_cycle_windows"] % 1:
        refuse("_cycle_windows", f"it counts windows, a whole number from 0 to {WINDOWS}")
    for field in ("_zeros", "_recent_zeros"):
        if values[field] > 1:
            refuse(field, "it is a share, at most 1")
    if values["_sigma"] != values["_noise"] * to_sigma:
        refuse("_sigma", "it must be the deviation that _noise gives")
    if (values["_previous"] is None) != (values["_weight"] == 0):
        refuse("_weight", "it is 0 exactly before the first sample")
    if (values["_weight"] == 0) != (values["_recent_weight"] == 0) or not values[
        "_recent_weight2"
    ] <= (values["_recent_weight"] ** 2):
        refuse(
            "_recent_weight",
            "it is 0 exactly when _weight is, and _recent_weight2 <= _recent_weight ** 2",
        )
    return {**values, "_cycle_residuals": array("i", residuals.tolist()), "_cycle_power": power}


# Fields of a state from before samples had weights (2026-11-27) that no step read: the sums and
# zeros of the samples since each CUSUM left 0.
UNREAD = ("_rise_sum", "_rise_zeros", "_fall_sum", "_fall_zeros")


def weighed(values: Any, learned: set[str]) -> Any:
    """A state from before samples had weights (every field of ``learned`` but
    ``_recent_weights``, and ``UNREAD``) as it loads now: every sample of weight 1, as they
    were, and the fields no step read left out. Anything else unchanged (the import then names
    what is wrong).

    >>> old = {"_recent": [3.0, 4.0], "_rise_sum": 0.0, "_rise_zeros": 0.0, "_fall_sum": 0.0,
    ...        "_fall_zeros": 0.0}
    >>> weighed(old, {"_recent", "_recent_weights"})
    {'_recent': [3.0, 4.0], '_recent_weights': [1.0, 1.0]}
    """
    if not isinstance(values, dict) or set(values) != (learned - {"_recent_weights"}) | set(UNREAD):
        return values
    recent = values["_recent"]
    kept = {key: value for key, value in values.items() if key not in UNREAD}
    return {**kept, "_recent_weights": [1.0] * len(recent) if isinstance(recent, list) else recent}


def loadable(values: Any, learned: set[str], *, recent: int, to_sigma: float) -> Any:
    """``values`` as the generic import takes them: a state from before weights mapped
    (``weighed``), the values of one with every field of ``learned`` checked (``check_state``:
    refused rather than producing nonsense); the field names are the import's to check."""
    values = weighed(values, learned)
    if isinstance(values, dict) and set(values) == learned:
        values = check_state(values, recent=recent, to_sigma=to_sigma)
    return values
