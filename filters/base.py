"""The contract every steadyscale denoiser follows.

A denoiser turns a stream of volume samples into a filtered stream, one sample at a time and
causally: the output for sample ``t`` depends only on samples ``0..t``. Appending samples never
changes an output already given.

The conventions below make every filter look the same to the service, the simulator and the
embedders, and keep ``spec``, ``state_dict`` and validation mechanical instead of hand-written:

* the constructor arguments are the hyperparameters; each is stored unchanged under its own name
  and validated in ``__init__`` (``ValueError`` naming the parameter, the value and what is
  allowed);
* learned state lives in underscore attributes created by ``reset()``; ``state_dict()`` exports
  them as JSON-compatible values and ``load_state_dict()`` converts them back to the types that
  ``reset()`` created, so continuing from a loaded state is exact;
* ``update(x)`` validates the sample and calls ``_update(x)``, the only method a filter must write.

>>> from filters import make_filter
>>> f = make_filter("moving_average", w=3)
>>> [f.update(v) for v in (3.0, 6.0, 9.0, 12.0)]
[3.0, 4.5, 6.0, 9.0]
>>> f.spec
{'name': 'moving_average', 'w': 3}

"""

from __future__ import annotations

import abc
import math
import numbers
from collections.abc import Iterable
from typing import ClassVar

import numpy as np

# The shared conventions of every configurable part, re-exported: filters import them from here.
from filters.configurable import (
    Configurable,
    MissingDependency,
    ParameterError,
    Registry,
    check_choice,
    check_number,
    optional,
    reject,
)

# The longest window a filter may keep, samples: its samples are state, exported at every
# checkpoint (10,000 are about 200 KB of JSON, some 10 ms to write); the windows that smooth
# well at one sample a second are tens to hundreds (docs/paper.md, docs/default.md).
MAX_WINDOW = 10_000

__all__ = [
    "MAX_WINDOW",
    "Configurable",
    "Denoiser",
    "MissingDependency",
    "ParameterError",
    "Registry",
    "check_choice",
    "check_number",
    "optional",
    "reject",
]


class Denoiser(Configurable, abc.ABC):
    """Base class of the online denoisers.

    Subclasses store their hyperparameters, create their learned state in ``reset()`` and
    implement ``_update``. A filter that knows how uncertain its output is sets
    ``reports_spread`` and overrides ``spread``.
    """

    reports_spread: ClassVar[bool] = False

    @property
    def spread(self) -> float | None:
        """Standard error of the last output (volume units), or ``None`` when not known."""
        return None

    @property
    def noise(self) -> float | None:
        """Deviation of one input sample around the level (volume units), as this filter
        estimates it, or ``None`` for a filter that keeps no such estimate."""
        return None

    @abc.abstractmethod
    def _update(self, x: float) -> float:
        """Consume one finite sample and return the filtered value."""

    @abc.abstractmethod
    def reset(self) -> None:
        """Forget every sample seen; the filter behaves as newly constructed."""

    def update(self, x: float) -> float:
        """Feed one sample (a finite number) and return the filtered value as a ``float``."""
        return self._update(_finite_sample(x, "x"))

    def weighed(self, x: float, weight: float) -> float:
        """``update(x)`` for a sample that covers ``weight`` (a number > 0) of the stream's
        typical sampling intervals: a micro-batch that ran three times as long as most is a
        mean over three times the seconds, and weighs 3. A filter that counts samples
        (every one but ``changepoint``) takes it as one, whatever its weight."""
        if type(weight) is not float or not 0.0 < weight < math.inf:
            check_number(self.name, "weight", weight, minimum=0, exclusive_minimum=True)
        return self._weighed(_finite_sample(x, "x"), float(weight))

    def _weighed(self, x: float, weight: float) -> float:
        return self._update(x)

    def filter(self, xs: Iterable[float]) -> np.ndarray:
        """Feed many samples in order; same result as calling ``update`` on each.

        The whole input is validated first, so a bad sample leaves the filter untouched.
        """
        values = np.asarray(list(xs) if not isinstance(xs, np.ndarray) else xs, dtype=float)
        if values.ndim != 1:
            raise ValueError(f"xs must be one-dimensional, got shape {values.shape}")
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            index = int(bad[0])
            value = float(values[index])
            raise ValueError(f"xs[{index}]={value!r} is not allowed: samples must be finite")
        update = self._update
        return np.array([update(x) for x in values.tolist()], dtype=float)


def _finite_sample(x: object, field: str) -> float:
    if type(x) is float:
        value = x
    elif isinstance(x, numbers.Real) and not isinstance(x, bool):
        value = float(x)
    else:
        raise ValueError(f"{field}={x!r} is not allowed: samples must be finite numbers")
    if not math.isfinite(value):
        raise ValueError(f"{field}={x!r} is not allowed: samples must be finite numbers")
    return value
