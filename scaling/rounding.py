"""``round(value, digits)`` for the numbers a decision's record stores, without ``round``'s
decimal conversion where the answer is plain: a fraction of its cost, a few dozen times a
decision (``scaling.choice.Choice.explain``).

``round`` gives the double nearest to the decimal of ``digits`` places nearest to ``value``
(ties to even). With ``scaled = value * 10**digits`` (one rounding: relative error at most
2⁻⁵³), that decimal is ``k / 10**digits`` for k the integer nearest to the exact product,
which is the integer nearest to ``scaled`` unless the product lies within ``TIE`` of a
half-integer; and the division of two exact doubles is correctly rounded, so it gives the
double nearest to that decimal. Near a half-integer, and beyond ``LARGEST``, ``round`` itself
answers, and for anything but a float; a value that rounds to zero keeps its sign, as with
``round``.

>>> rounded(2464.12349, 3), rounded(-0.0004, 3), rounded(0.0625, 3), rounded(1e300, 3)
(2464.123, -0.0, 0.062, 1e+300)
"""

from __future__ import annotations

import math

# Beyond it a product may be off by more than TIE from the exact one: LARGEST * 2⁻⁵³ < TIE.
LARGEST = 1e9
TIE = 1e-6
_SCALES = tuple(10.0**digits for digits in range(10))


def rounded(value: float, digits: int) -> float:
    """``round(value, digits)`` for ``0 <= digits <= 9``: the same number, of the same type
    (tests/scaling/test_rounding.py compares the two; anything but a float goes to ``round``)."""
    if type(value) is float:
        scale = _SCALES[digits]
        scaled = value * scale
        if -LARGEST < scaled < LARGEST:
            whole = math.floor(scaled)
            part = scaled - whole  # exact: a double under 2⁵² less its integer part
            if not 0.5 - TIE < part < 0.5 + TIE:
                nearest = whole + 1 if part > 0.5 else whole
                return nearest / scale if nearest else math.copysign(0.0, value)
    return round(value, digits)
