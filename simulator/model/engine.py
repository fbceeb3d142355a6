"""The simulation engine: feed a volume series through a Scaler and measure what it did."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from scaling import Decision, Scaler
from simulator.model.metrics import provisioning_metrics

# Samples between two progress reports: a few tenths of a second of work for the slower
# filters, so reporting costs nothing measurable and a progress bar still moves.
PROGRESS_CHUNK = 10_000


@dataclass(frozen=True)
class SimulationResult:
    """What a run did, sample by sample, and its metrics (see ``simulator.model.metrics``).

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
    progress: Callable[[int], None] | None = None,
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
    progress
        Called with the number of samples observed so far after every ``PROGRESS_CHUNK``
        samples and after the last one (so the last call gets ``n``), e.g. to move a progress
        bar: ``progress=lambda done: bar.update(done - bar.n)``.
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
    samples = list(zip(volumes.tolist(), times.tolist(), strict=True))
    chunk = max(len(samples), 1) if progress is None else PROGRESS_CHUNK
    decisions: list[Decision] = []
    for first in range(0, len(samples), chunk):
        decisions.extend(scaler.observe(volume, t) for volume, t in samples[first : first + chunk])
        if progress is not None:
            progress(len(decisions))
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
