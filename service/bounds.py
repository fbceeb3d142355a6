"""The bounds of every number a request may carry, and the checks that apply them.

Every number has bounds, and the OpenAPI document states them (``service.models`` gives each
field its ``ge``/``le``): they keep every value the service computes from them finite and every
count within SQLite's integers, whatever a client sends (``MAX_VOLUME`` tuples/s over
``MIN_CAPACITY`` gives at most 10^15 operators).

The checks run before pydantic's own (``BeforeValidator``), so that a refusal says what is
allowed in the field's own words, and a number is a JSON number: not a string, not a boolean.
"""

from __future__ import annotations

from pydantic import BeforeValidator

MAX_VOLUME = 1e12
MAX_ABS_T = 1e15
MIN_CAPACITY = 1e-3
MAX_CAPACITY = 1e12
MAX_OPERATORS = 1_000_000_000
MAX_BACKLOG = 1e15
MAX_SECONDS = 1e9
# The smallest late probability a policy may state: one second in 30,000 years.
MIN_RISK = 1e-12
# Prices: an operator-second costs at least a millionth of the unit, and any price at most
# 10^12 of it, so that a horizon's cost (10^4 s x 10^9 operators) stays a finite float.
MIN_PRICE = 1e-6
MAX_PRICE = 1e12

_T_ALLOWED = f"t must be a finite number of seconds, from {-MAX_ABS_T:g} to {MAX_ABS_T:g}"
_VOLUME_ALLOWED = f"volume must be a number from 0 to {MAX_VOLUME:g} (tuples/s)"
_CAPACITY_ALLOWED = (
    f"capacity must be a number from {MIN_CAPACITY:g} to {MAX_CAPACITY:g} (tuples/s per operator)"
)


def in_bounds(value: object, allowed: str, minimum: float, maximum: float) -> object:
    """``value`` if it is a JSON number within the bounds, else ``ValueError(allowed)``.

    Integers are compared as integers: ``float()`` of a 400-digit one would overflow."""
    if type(value) is float:  # most numbers in a request, two per sample: no more to ask
        if minimum <= value <= maximum:
            return value
        raise ValueError(allowed)
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    if not is_number or not minimum <= value <= maximum:  # type: ignore[operator]
        raise ValueError(allowed)
    return float(value)  # type: ignore[arg-type]


def check_t(value: object) -> object:
    return in_bounds(value, _T_ALLOWED, -MAX_ABS_T, MAX_ABS_T)


def check_volume(value: object) -> object:
    return in_bounds(value, _VOLUME_ALLOWED, 0.0, MAX_VOLUME)


def check_capacity(value: object) -> object:
    return in_bounds(value, _CAPACITY_ALLOWED, MIN_CAPACITY, MAX_CAPACITY)


def bounded(
    name: str, low: float, high: float, what: str, nullable: bool = False
) -> BeforeValidator:
    """A JSON number from ``low`` to ``high`` (``None`` too when ``nullable``), as a float."""
    allowed = f"{name} must be a number from {low:g} to {high:g} ({what})"
    allowed += ", or null" if nullable else ""

    def check(value: object) -> object:
        if value is None and nullable:
            return None
        return in_bounds(value, allowed, low, high)

    return BeforeValidator(check)


def count(name: str) -> BeforeValidator:
    """An operator count: an integral JSON number (``2`` or ``2.0``) from 0 to
    ``MAX_OPERATORS``, as an ``int``."""
    allowed = f"{name} must be an integer from 0 to {MAX_OPERATORS}"

    def check(value: object) -> object:
        if value is None and name in ("max_operators", "running"):
            return None
        number = in_bounds(value, allowed, 0, MAX_OPERATORS)
        if not float(number).is_integer():  # type: ignore[arg-type]
            raise ValueError(allowed)
        return int(number)  # type: ignore[call-overload]

    return BeforeValidator(check)
