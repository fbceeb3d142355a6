"""Event logs as files: the formats ``steadyscale trace`` reads, and synthetic logs to try it on.

``write_events`` writes Poisson arrivals at a workload's volume as CSV or Parquet;
``check_input`` and ``detect_format`` look at an input path before any Spark job starts (pure
Python: a missing file or an unknown format is refused in one line). The Spark job that counts
the events is ``simulator.spark.events``.
"""

from __future__ import annotations

import csv
import glob
import os
from datetime import datetime
from pathlib import Path
from typing import Literal

import numpy as np

from filters.base import check_number

FORMATS = {"csv": (".csv", ".csv.gz", ".csv.bz2"), "parquet": (".parquet",)}
"""Input formats and the file endings they are recognised by."""


def write_events(
    path: str | os.PathLike[str],
    rates: np.ndarray,
    start: datetime,
    step: float = 1.0,
    seed: int = 1,
) -> int:
    """Write an event log whose volume follows ``rates``: the input ``events_to_volume`` reads.

    For trying ``steadyscale trace`` without a log of one's own. Sample ``k`` of ``rates``
    (events per second) covers ``[k * step, (k + 1) * step)`` seconds after ``start`` (naive:
    UTC); it gets a Poisson number of events of mean ``rates[k] * step``, at uniform moments in
    it, sorted. Columns ``ts`` (the event's time) and ``user`` (``u0`` ... ``u99``, a stand-in
    payload). CSV (``ts`` as ``YYYY-MM-DD HH:MM:SS.ffffff``) or Parquet (``ts`` a timestamp
    column, through pyarrow) by the ending of ``path``. Returns the number of events.
    """
    name = "write_events"
    check_number(name, "step", step, minimum=0, exclusive_minimum=True)
    if rates.ndim != 1 or not np.all(np.isfinite(rates)) or np.any(rates < 0):
        raise ValueError(f"{name}: rates must be finite volumes >= 0, one per sample")
    form = detect_format(str(path))
    rng = np.random.default_rng(seed)
    counts = rng.poisson(rates * step)
    offsets = np.repeat(np.arange(rates.size) * step, counts) + rng.uniform(0, step, counts.sum())
    offsets.sort()
    moments = np.datetime64(start, "us") + np.round(offsets * 1e6).astype("timedelta64[us]")
    users = np.char.add("u", rng.integers(0, 100, offsets.size).astype(str))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    if form == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table({"ts": moments, "user": users}), str(path))
    else:
        stamps = np.datetime_as_string(moments, unit="us")
        with Path(path).open("w", newline="", encoding="utf-8") as file:
            writer = csv.writer(file, lineterminator="\n")
            writer.writerow(["ts", "user"])
            writer.writerows(zip(np.char.replace(stamps, "T", " "), users, strict=True))
    return int(offsets.size)


def check_input(path: str) -> None:
    """``ValueError`` when a local ``path`` (not a URL such as ``s3a://``) matches nothing.

    Pure Python, so that ``steadyscale trace`` refuses a missing input in one line before Spark
    starts, instead of Spark's analysis error after it has.
    """
    if "://" not in path and not glob.glob(path):
        raise ValueError(f"{path}: no such file, directory or glob match")


def refuse_volume_trace(path: str) -> None:
    """``ValueError`` when ``path`` is a CSV file whose header is ``timestamp,value``.

    That is a volume trace already (what ``steadyscale trace`` writes): counting its rows as
    events would give one event per sample, a rate that means nothing, without any error.
    """
    if not (os.path.isfile(path) and path.endswith(FORMATS["csv"])):
        return
    with open(path, encoding="utf-8", errors="replace") as handle:
        header = handle.readline()
    if [column.strip().strip('"') for column in header.split(",")] == ["timestamp", "value"]:
        raise ValueError(
            f"--input {path} is already a volume trace (columns timestamp,value), not one row "
            f"per event: replay it with steadyscale simulate --trace {path}"
        )


def detect_format(path: str) -> Literal["csv", "parquet"]:
    """The input format of ``path`` by the ending of its name or of the data files it holds.

    Pure Python, like ``check_input``: ``ValueError`` when no ending is one of ``FORMATS``.
    """
    matches = glob.glob(path)
    if os.path.isdir(path):
        names = _data_files(path)
    elif glob.has_magic(path) and matches:
        names = [
            name
            for match in matches
            for name in (_data_files(match) if os.path.isdir(match) else [match])
        ]
    else:
        names = [path]
    found = {form for name in names for form, ends in FORMATS.items() if name.endswith(ends)}
    if len(found) == 1:
        return "csv" if found.pop() == "csv" else "parquet"
    allowed = ", ".join(f"{form} ({' '.join(ends)})" for form, ends in FORMATS.items())
    if found:
        seen = f"it holds files of both formats, {sorted(found)}"
    elif "://" not in path and not matches:
        seen = "nothing is there"
    else:
        seen = "no file name there ends like one"
    raise ValueError(
        f"events_to_volume: cannot tell the input format of {path}: {seen}; the formats are "
        f"{allowed}; pass input_format to choose"
    )


def _data_files(directory: str) -> list[str]:
    """Files under ``directory`` that Spark reads: not hidden, not ``_SUCCESS`` and the like."""
    return [
        os.path.join(folder, name)
        for folder, _, names in os.walk(directory)
        if not any(
            part.startswith(("_", ".")) for part in Path(folder).relative_to(directory).parts
        )
        for name in names
        if not name.startswith(("_", "."))
    ]
