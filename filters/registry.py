"""Build filters by name or from a spec dict, and list the names that exist."""

from __future__ import annotations

from typing import Any

from filters.base import Denoiser, MissingDependency, Registry
from filters.changepoint import ChangePoint
from filters.ekf import ExtendedKalman
from filters.ewma import EWMA
from filters.moving_average import MovingAverage
from filters.moving_median import MovingMedian
from filters.raw import Raw
from filters.tvd import TotalVariation

FILTERS: Registry[Denoiser] = Registry(
    "filter",
    (Raw, MovingAverage, MovingMedian, EWMA, TotalVariation, ExtendedKalman, ChangePoint),
)


def available_filters() -> list[str]:
    """Names accepted by ``make_filter``, sorted.

    >>> available_filters()
    ['changepoint', 'ekf', 'ewma', 'moving_average', 'moving_median', 'raw', 'tvd']
    """
    return FILTERS.names()


def installed_filters() -> list[str]:
    """The names of ``available_filters()`` that work with the packages installed here (the
    others need an extra, e.g. ``ekf`` needs ``steadyscale[filters]``), sorted.

    >>> {"changepoint", "raw", "tvd"} <= set(installed_filters())
    True
    """
    names = []
    for name in FILTERS.names():
        try:
            make_filter(name)
        except MissingDependency:
            continue
        names.append(name)
    return names


def make_filter(spec: str | dict[str, Any], **params: Any) -> Denoiser:
    """Build a filter from its name and parameters, or from a spec dict.

    ``make_filter("tvd", lam=40.0)`` and ``make_filter({"name": "tvd", "lam": 40.0})`` are the
    same filter; ``make_filter(f.spec)`` rebuilds ``f``'s configuration (not its state).
    Unknown names and parameters raise ``ValueError`` saying what is allowed.

    >>> make_filter({"name": "ewma", "alpha": 0.5}).spec
    {'name': 'ewma', 'alpha': 0.5}
    """
    return FILTERS.build(spec, **params)
