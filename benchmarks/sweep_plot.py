"""The price sweep's picture (``benchmarks.regimes --sweep --plot``): per actuation regime, the
default's operator-seconds against its SLA seconds as its late price varies, beside the HPA's
curve as its target utilisation varies and every other baseline's point."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any


def plot_sweep(path: Path, curves: Mapping[tuple[int, int], Mapping[str, Any]]) -> None:
    """One panel per regime: SLA seconds (x, symlog) against operator-seconds (y)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    columns = min(4, len(curves))
    rows = (len(curves) + columns - 1) // columns
    figure, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.6 * rows), squeeze=False)
    for axis, (regime, curve) in zip(axes.flat, curves.items(), strict=False):
        _, cost, sla = zip(*curve["default"], strict=True)
        axis.plot(
            sla, cost, "o-", color="tab:red", label="steadyscale, late price varied", zorder=3
        )
        for index, (price, c, s) in enumerate(curve["default"]):
            _label(axis, f"{price:g}", s, c, index, "tab:red")
        _, cost, sla = zip(*curve["hpa"], strict=True)
        axis.plot(sla, cost, "s-", color="tab:blue", label="HPA, target 0.5-0.9")
        for index, (target, c, s) in enumerate(curve["hpa"]):
            _label(axis, f"{target:g}", s, c, index, "tab:blue")
        points = list(curve["others"].values())
        axis.plot(
            [s for _, s in points],
            [c for c, _ in points],
            "x",
            color="0.55",
            label="every other baseline (one point each)",
        )
        axis.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value / 1e6:.1f}M"))
        axis.set_xscale("symlog", linthresh=10)
        axis.set_title(f"pause {regime[0]} s, delay {regime[1]} s", fontsize=9)
        axis.set_xlabel("SLA seconds (summed)", fontsize=8)
        axis.set_ylabel("operator-s + 30/operation", fontsize=8)
        axis.tick_params(labelsize=7)
    for axis in list(axes.flat)[len(curves) :]:
        axis.axis("off")
    axes.flat[0].legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def _label(axis: Any, text: str, x: float, y: float, index: int, color: str) -> None:
    """A point's label, above and below its neighbours' in turn: neighbours often sit close."""
    offset = (4, 4) if index % 2 == 0 else (4, -10)
    axis.annotate(text, (x, y), fontsize=6, xytext=offset, textcoords="offset points", color=color)
