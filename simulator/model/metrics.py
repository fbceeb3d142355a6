"""Scaling metrics of a simulated run, with the definitions every table states.

* **needed operators** at sample ``i``: ``max(min_operators, ceil(v_i / capacity))`` for the
  reference volume ``v`` (then capped at ``max_operators`` when the policy has one);
* **s_up / s_down** (the paper's s+ / s−): the number of decisions that raise / lower the
  operator count, counted from the initial count;
* **p_over / p_under** (p+ / p−): seconds during which the running operator count is above /
  below the count needed by the reference volume. A decision at sample ``i`` takes effect at
  once and holds for that sample's ``step`` seconds;
* **operator_seconds**: the sum of the running operator count times ``step``.

The reference is the noisy volume by default (noise is real short-term load) or the noise-free
trend; each result says which.
"""

from __future__ import annotations

import numpy as np


def provisioning_metrics(
    operators: np.ndarray, needed: np.ndarray, *, initial: int, step: float = 1.0
) -> dict[str, float]:
    """s_up, s_down, p_over, p_under and operator_seconds of one run.

    Parameters
    ----------
    operators
        Running operator count after each decision, shape ``(n,)``.
    needed
        Operators needed by the reference volume at each sample, shape ``(n,)``.
    initial
        Operator count before the first decision.
    step
        Seconds per sample.

    >>> provisioning_metrics(np.array([2, 3, 3, 2]), np.array([2, 2, 4, 2]), initial=1)
    {'s_up': 2, 's_down': 1, 'p_over': 1.0, 'p_under': 1.0, 'operator_seconds': 10.0}
    """
    operators = np.asarray(operators)
    needed = np.asarray(needed)
    if operators.shape != needed.shape or operators.ndim != 1:
        raise ValueError(
            f"operators {operators.shape} and needed {needed.shape} must be 1-D of one length"
        )
    changes = np.diff(np.concatenate([[initial], operators]))
    return {
        "s_up": int(np.count_nonzero(changes > 0)),
        "s_down": int(np.count_nonzero(changes < 0)),
        "p_over": float(np.count_nonzero(operators > needed) * step),
        "p_under": float(np.count_nonzero(operators < needed) * step),
        "operator_seconds": float(operators.sum() * step),
    }
