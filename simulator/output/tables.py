"""Tables of summarised experiment rows: markdown for the reports, CSV for the data."""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

DEFINITIONS_TEXT = """\
Definitions. Needed operators at t: max(1, ceil(v_t / 50)) for the reference volume v (capacity 50
tuples/s per operator). s+ / s−: decisions that raise / lower the operator count. p+ / p−: seconds
the running operator count is above / below the count needed by the reference volume: the noisy
volume (the paper's view; raw thresholding scores 0 by construction) or the noise-free trend
("vs trend", the measure of a filter's quality). SNR `power`: mean(trend²) / σ²; `amplitude`:
mean(trend) / σ (the Rose-criterion form). Gaussian noise, volumes clipped at 0. 1,500 s of
`paper_workload` at one sample per second; each run starts with the operators its trend needs
at t = 0. Values are means ± the half-width of the 95 % confidence interval (Student t) over
the seeds."""


def mean_ci(row: Mapping[str, Any], metric: str, digits: int = 0) -> str:
    """``"123 ± 4"``: the mean of ``metric`` and its confidence half-width.

    >>> mean_ci({"s_up": 12.345, "s_up_ci": 1.2}, "s_up", 1)
    '12.3 ± 1.2'
    """
    return f"{row[metric]:.{digits}f} ± {row[metric + '_ci']:.{digits}f}"


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub markdown table.

    >>> print(markdown_table(["a", "b"], [["1", "2"]]))
    | a | b |
    |---|---|
    | 1 | 2 |
    """
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def metric_table(
    rows: Sequence[Mapping[str, Any]],
    columns: Mapping[str, str],
    baseline: Mapping[str, Any] | None = None,
) -> str:
    """One row per configuration; ``columns`` maps metric → header; the best mean in bold.

    With ``baseline`` (a row), a last column gives the cut in s+ + s− relative to it.
    """
    best = {metric: min(row[metric] for row in rows) for metric in columns}
    lines = []
    for row in rows:
        cells = [f"`{row['config']}`"]
        for metric in columns:
            text = mean_ci(row, metric)
            cells.append(f"**{text}**" if row[metric] == best[metric] else text)
        if baseline is not None:
            cells.append(f"{cut(row, baseline):.1f} %")
        lines.append(cells)
    headers = ["configuration", *columns.values()]
    if baseline is not None:
        headers.append(f"cut in s± vs `{baseline['config']}`")
    return markdown_table(headers, lines)


def cut(row: Mapping[str, Any], baseline: Mapping[str, Any], metric: str = "s_total") -> float:
    """How much lower ``row``'s mean ``metric`` is than ``baseline``'s, in percent."""
    reference = float(baseline[metric])
    return 100.0 * (1.0 - float(row[metric]) / reference) if reference else 0.0


DEFAULT_CONFIG = "default"
ORACLE_CONFIG = "oracle"


def write_csv(path: Path, rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> Path:
    """``rows`` as CSV with a header, only ``columns``, in that order; returns ``path``."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(columns), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def write_columns(path: Path, columns: Mapping[str, Sequence[Any]]) -> None:
    """A CSV with a header of the column names and one row per index."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        writer.writerows(zip(*columns.values(), strict=True))
