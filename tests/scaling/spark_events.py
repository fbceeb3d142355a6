"""Spark progress events built by hand, and what a plain Scaler decides on their rates: shared
by the listener's tests and the deciders'."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import numpy as np

from scaling import Scaler

SPEC: dict[str, Any] = {
    "filter": {"name": "moving_median", "w": 5},
    "policy": {"capacity": 100.0, "min_operators": 1, "max_operators": 6},
    "guards": [{"name": "cooldown", "down": 20.0}],
}
START = 1_795_000_000.0  # epoch seconds


def stamp(t: float) -> str:
    """A progress event's timestamp, as Spark writes it."""
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def progress(t: float, rate: float, query: str = "q-1", name: str | None = "orders") -> Any:
    return SimpleNamespace(
        progress=SimpleNamespace(id=query, name=name, timestamp=stamp(t), inputRowsPerSecond=rate)
    )


def volumes(n: int = 120, seed: int = 3) -> list[float]:
    rng = np.random.default_rng(seed)
    trend = np.repeat([150.0, 450.0, 250.0], n // 3 + 1)[:n]
    return np.clip(trend + rng.normal(0.0, 40.0, n), 0.0, None).round(3).tolist()


def reference(rates: Sequence[float]) -> list[int]:
    """The counts a plain Scaler decides on the same samples."""
    scaler = Scaler.from_spec(SPEC, operators=1)
    return [scaler.observe(rate, START + i).operators for i, rate in enumerate(rates)]
