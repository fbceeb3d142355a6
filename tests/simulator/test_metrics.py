"""Metrics on hand-built series whose answers are known."""

from __future__ import annotations

import numpy as np
import pytest

from simulator.model.metrics import provisioning_metrics


def test_counts_scaling_operations_from_the_initial_count() -> None:
    # 4 -> 4 (none), 5 (up), 7 (up: one decision even for two operators), 6 (down), 6, 2 (down)
    operators = np.array([4, 5, 7, 6, 6, 2])
    metrics = provisioning_metrics(operators, operators, initial=4)
    assert (metrics["s_up"], metrics["s_down"]) == (2, 2)
    assert (metrics["p_over"], metrics["p_under"]) == (0.0, 0.0)


def test_a_first_decision_that_changes_the_count_is_an_operation() -> None:
    metrics = provisioning_metrics(np.array([3, 3]), np.array([3, 3]), initial=1)
    assert (metrics["s_up"], metrics["s_down"]) == (1, 0)


def test_provisioning_seconds_scale_with_the_step() -> None:
    operators = np.array([2, 2, 5, 5, 1])
    needed = np.array([2, 3, 4, 5, 2])
    metrics = provisioning_metrics(operators, needed, initial=2, step=5.0)
    assert metrics["p_over"] == 5.0  # sample 2: 5 > 4
    assert metrics["p_under"] == 10.0  # samples 1 and 4
    assert metrics["operator_seconds"] == 75.0  # (2 + 2 + 5 + 5 + 1) * 5


def test_mismatched_series_are_refused() -> None:
    with pytest.raises(ValueError, match="one length"):
        provisioning_metrics(np.array([1, 2]), np.array([1]), initial=1)
