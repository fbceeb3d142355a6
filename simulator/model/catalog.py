"""Every workload by name, synthetic or recorded: ``WORKLOADS`` and ``make_workload``.

``make_workload(name, seed, duration, **params)`` builds any of them, the way the command line
and the sweeps refer to them:

>>> sorted(WORKLOADS)
['convergence', 'cosine', 'decreasing', 'increasing', 'paper', 'ramp', 'random_walk', 'spike',
 'step', 'trace']
>>> make_workload("step", duration=6, levels=(200.0, 400.0)).tolist()
[200.0, 200.0, 200.0, 400.0, 400.0, 400.0]
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from filters.base import check_choice, check_number
from simulator.model.traces import trace_workload
from simulator.model.workloads import (
    PAPER_HIGH,
    PAPER_LOW,
    convergence_workload,
    cosine_workload,
    monotone_workload,
    paper_workload,
    ramp_workload,
    random_walk_workload,
    spike_workload,
    step_workload,
)


def _equal_steps(
    levels: Sequence[float] = (250.0, 450.0, 300.0), duration: float = 1500.0, step: float = 1.0
) -> np.ndarray:
    """``step_workload`` with the levels sharing ``duration`` equally."""
    check_number("step workload", "duration", duration, minimum=0, exclusive_minimum=True)
    # With no levels, step_workload says so; the `or 1` only avoids dividing by zero first.
    return step_workload(levels, duration / (len(levels) or 1), step)


WORKLOADS: dict[str, Callable[..., np.ndarray]] = {
    "paper": paper_workload,
    "step": _equal_steps,
    "ramp": ramp_workload,
    "cosine": cosine_workload,
    "random_walk": random_walk_workload,
    "spike": spike_workload,
    "increasing": monotone_workload,
    "decreasing": partial(monotone_workload, start=PAPER_HIGH, end=PAPER_LOW),
    "convergence": convergence_workload,
    "trace": trace_workload,
}
"""Workload names and their generators. ``"step"`` shares ``duration`` equally among
``levels``; ``"increasing"`` and ``"decreasing"`` are ``monotone_workload`` from 200 to 500 and
from 500 to 200 tuples/s; ``"trace"`` needs ``path``."""


def make_workload(
    name: str, seed: int = 0, duration: float | None = 1500.0, **params: Any
) -> np.ndarray:
    """Build the workload ``name`` of ``WORKLOADS`` over ``duration`` seconds.

    ``seed`` goes to the random workloads and is ignored by the deterministic ones; ``params``
    are the generator's other keyword parameters. Unknown names or parameters raise
    ``ValueError`` listing what is allowed.

    >>> make_workload("ramp", duration=3, start=100.0, end=300.0).tolist()
    [100.0, 200.0, 300.0]
    >>> make_workload("sine")
    Traceback (most recent call last):
    ...
    filters.configurable.ParameterError: make_workload: name='sine' is not allowed: ... one of [...]
    """
    check_choice("make_workload", "name", name, WORKLOADS)
    generator = WORKLOADS[name]
    accepted = inspect.signature(generator).parameters
    arguments: dict[str, Any] = {"duration": duration, **params}
    if "seed" in accepted:
        arguments["seed"] = seed
    for parameter, value in arguments.items():
        if parameter not in accepted:
            raise ValueError(
                f"make_workload: {parameter}={value!r} is not allowed for workload {name!r}: "
                f"its parameters are {[p for p in accepted if p != 'seed']}"
            )
    missing = [
        parameter
        for parameter, spec in accepted.items()
        if spec.default is inspect.Parameter.empty and parameter not in arguments
    ]
    if missing:
        raise ValueError(f"make_workload: workload {name!r} needs the parameter(s) {missing}")
    return generator(**arguments)
