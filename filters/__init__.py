"""Online denoisers for volume series, behind one contract (see ``filters.base``).

>>> from filters import make_filter
>>> f = make_filter("tvd", lam=40.0)
>>> round(f.update(352.0), 1)
352.0
"""

from __future__ import annotations

from filters.base import Denoiser
from filters.registry import available_filters, installed_filters, make_filter

__all__ = ["Denoiser", "available_filters", "installed_filters", "make_filter"]
