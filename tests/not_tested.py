"""Skipping a test whose real part (a browser, a PostgreSQL server, kubectl, promtool,
Prometheus) this machine lacks, loudly: a warning in the summary and a skip reason, both
"<what> NOT TESTED: <why>", so that a run without it never reads as a pass."""

from __future__ import annotations

import warnings
from typing import NoReturn

import pytest


def not_tested(what: str, why: str) -> NoReturn:
    """Warn and skip, naming ``what`` was not tested and ``why`` (how to get it)."""
    message = f"{what} NOT TESTED: {why}"
    warnings.warn(message, stacklevel=3)
    pytest.skip(message)
