"""The simulation engine: feed a volume series through a Scaler and measure what it did."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scaling import Scaler
from simulator.metrics import provisioning_metrics


@dataclass(frozen=True)
class SimulationResult:
    """What a run did, sample by sample, and its metrics (see ``simulator.metrics``).

    ``timeline`` holds equal-length arrays: ``t`` (seconds), ``volume`` (the samples fed to the
    scaler), ``filtered``, ``operators`` (running count after each decision) and ``needed``
    (operators needed by the reference volume); ``needed_trend`` too when a trend was given.
    ``metrics`` are measured against ``reference`` (``"volume"``: the samples themselves,
    ``"trend"``, or ``"given"``: an array passed in); ``trend_metrics`` against the trend, when
    one was given.
    """

    timeline: dict[str, np.ndarray]
    metrics: dict[str, float]
    reference: str
    trend_metrics: dict[str, float] | None = None


def simulate(
    scaler: Scaler,
    volumes: np.ndarray,
    reference: np.ndarray | str | None = None,
    *,
    trend: np.ndarray | None = None,
    step: float = 1.0,
    start: float = 0.0,
) -> SimulationResult:
    """Run ``scaler`` over ``volumes`` (one sample every ``step`` seconds from ``start``).

    Parameters
    ----------
    scaler
        The Scaler to drive; it keeps its state afterwards (continue or inspect it).
    volumes
        The volume samples, shape ``(n,)``, what the scaler observes (usually trend + noise).
    reference
        The volume that defines the operators needed: ``None`` (the samples), ``"trend"``
        (requires ``trend``) or an array of shape ``(n,)``.
    trend
        The noise-free volume, shape ``(n,)``; when given, ``trend_metrics`` are measured too.
    """
    volumes = np.asarray(volumes, dtype=float)
    if volumes.ndim != 1:
        raise ValueError(f"volumes must be one-dimensional, got shape {volumes.shape}")
    if trend is not None:
        trend = _same_shape("trend", trend, volumes)
    if reference is None:
        label, reference_volume = "volume", volumes
    elif isinstance(reference, str):
        if reference != "trend" or trend is None:
            raise ValueError(
                f"reference={reference!r} is not allowed: use None (the samples), an array, "
                "or 'trend' together with trend=..."
            )
        label, reference_volume = "trend", trend
    else:
        label, reference_volume = "given", _same_shape("reference", reference, volumes)

    initial = scaler.operators
    times = start + step * np.arange(volumes.size)
    samples = zip(volumes.tolist(), times.tolist(), strict=True)
    decisions = [scaler.observe(volume, t) for volume, t in samples]
    operators = np.array([d.operators for d in decisions], dtype=int)
    timeline = {
        "t": times,
        "volume": volumes,
        "filtered": np.array([d.filtered for d in decisions]),
        "operators": operators,
        "needed": _needed(scaler, reference_volume),
    }
    trend_metrics = None
    if trend is not None:
        timeline["needed_trend"] = _needed(scaler, trend)
        trend_metrics = provisioning_metrics(
            operators, timeline["needed_trend"], initial=initial, step=step
        )
    metrics = provisioning_metrics(operators, timeline["needed"], initial=initial, step=step)
    return SimulationResult(timeline, metrics, label, trend_metrics)


def _needed(scaler: Scaler, volume: np.ndarray) -> np.ndarray:
    needed = scaler.policy.needed
    return np.array([needed(v) for v in volume.tolist()], dtype=int)


def _same_shape(name: str, values: np.ndarray, volumes: np.ndarray) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.shape != volumes.shape:
        raise ValueError(f"{name} has shape {array.shape}; it must match volumes {volumes.shape}")
    return array
