"""Recorded traces: CSV files of ``timestamp,value`` read, checked and replayed as trends.

``read_trace`` reads and checks a file; ``trace_workload`` (the ``"trace"`` workload) and
``replay_trace`` replay it at one sample per ``step`` seconds, rescaled to the paper's
200-500 tuples/s unless told to keep the recorded values; ``TraceReplay`` says what the replay
did (spacing, time scale, dates). Timestamps are seconds or ISO datetimes (``epoch_seconds``).
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from filters.base import check_number
from simulator.model.workloads import PAPER_HIGH, PAPER_LOW, _sample_times


def read_trace(
    path: str | os.PathLike[str], column: str = "value"
) -> tuple[np.ndarray, np.ndarray]:
    """Read a CSV trace: seconds since its first timestamp, and the ``column`` values.

    The file needs a header with ``timestamp`` and ``column``. Timestamps are all numbers
    (seconds) or all ISO datetimes (offsets are converted to UTC, naive ones taken as they
    are); they must increase strictly. Values must be finite numbers. Errors name the line.
    """
    with Path(path).open(newline="", encoding="utf-8") as file:
        reader = csv.DictReader(file)
        header = reader.fieldnames or []
        if "timestamp" not in header or column not in header:
            raise ValueError(
                f"{path}: the header must name the columns 'timestamp' and {column!r}, "
                f"not {header!r}"
            )
        rows = [(row["timestamp"], row[column]) for row in reader]
    if len(rows) < 2:
        raise ValueError(f"{path}: {len(rows)} samples; a trace needs at least 2")
    values = _parsed(path, column, [text for _, text in rows], float, "a finite number")
    stamps = [stamp for stamp, _ in rows]
    try:
        float(stamps[0])
    except (TypeError, ValueError):
        moments = _parsed(path, "timestamp", stamps, epoch_seconds, "an ISO datetime, like line 2")
    else:
        moments = _parsed(path, "timestamp", stamps, float, "a finite number, like line 2")
    seconds = moments - moments[0]
    backwards = np.flatnonzero(np.diff(seconds) <= 0)
    if backwards.size:
        line = int(backwards[0]) + 3
        raise ValueError(
            f"{path}, line {line}: timestamp={rows[line - 2][0]!r} does not come after the one "
            "before; timestamps must increase (sort the file, drop duplicates)"
        )
    return seconds, values


def trace_workload(
    path: str | os.PathLike[str],
    step: float = 1.0,
    low: float | None = PAPER_LOW,
    high: float | None = PAPER_HIGH,
    duration: float | None = None,
    column: str = "value",
    time_scale: float | None = None,
) -> np.ndarray:
    """Replay a recorded ``timestamp,value`` trace as a volume series, compressed in time.

    1. Time: replay second ``tau`` shows the trace at ``time_scale * tau`` seconds after its
       first timestamp. The default ``time_scale`` is the median spacing of the trace's
       timestamps divided by ``step``: one recorded sample per output sample, which is the
       usual way to turn a 5-minute trace into a 1 Hz series (a NAB Twitter trace then plays
       300 s of recording per second, nyc_taxi 1,800 s). ``time_scale=1`` replays in real time.
    2. Resampling: the output has a sample every ``step`` seconds of replay, each the linear
       interpolation of the trace between its two neighbouring timestamps. On a regular trace
       with the default ``time_scale`` these are the recorded values themselves; gaps in the
       recording are bridged by straight lines.
    3. Length: every sample the recording covers, or the first ``duration`` seconds (a
       multiple of ``step``; ``ValueError`` if the trace is shorter).
    4. Scale: the output is mapped linearly so that its minimum becomes ``low`` and its maximum
       ``high`` (after cutting to ``duration``: the returned series spans exactly [low, high]).
       ``low=None, high=None`` keeps the recorded values. A single outlier compresses the rest.

    See ``read_trace`` for the file format, and ``replay_trace`` for the same series with a
    record of what was done to it (rescaling, time compression, the recorded dates).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "trace.csv"
    ...     _ = path.write_text("timestamp,value\\n0,10\\n300,30\\n600,20\\n")
    ...     trace_workload(path).tolist(), trace_workload(path, time_scale=150).tolist()
    ([200.0, 500.0, 350.0], [200.0, 350.0, 500.0, 425.0, 350.0])
    """
    return replay_trace(path, step, low, high, duration, column, time_scale).values


@dataclass(frozen=True)
class TraceReplay:
    """A replayed trace and what was done to it, so that reports can say so.

    ``values`` is the series (one sample every ``step`` seconds of replay); replay second
    ``tau`` shows the recording at ``time_scale * tau`` seconds after ``start``. ``recorded``
    is the lowest and highest recorded value replayed, ``rescaled`` the ``(low, high)`` they
    were mapped onto, ``None`` when the values are the recorded ones. ``start`` is the first
    timestamp when the trace's timestamps are datetimes (naive, as written; UTC when the file
    gave offsets), ``None`` when they are plain seconds.
    """

    values: np.ndarray
    step: float
    time_scale: float
    spacing: float
    recorded: tuple[float, float]
    rescaled: tuple[float, float] | None
    start: datetime | None

    def dates(self) -> np.ndarray | None:
        """The recorded moment of each sample (``datetime64[ms]``), or ``None`` without dates."""
        if self.start is None:
            return None
        offsets = np.arange(self.values.size) * self.step * self.time_scale * 1000.0
        return np.datetime64(self.start, "ms") + np.round(offsets).astype("timedelta64[ms]")

    def describe(self, unit: str = "tuples/s") -> str:
        """One sentence: the recording, the time compression and the rescaling applied."""
        span = ""
        dates = self.dates()
        if dates is not None:
            span = f" from {_minute(dates[0])} to {_minute(dates[-1])}"
        text = f"{self.values.size:,} samples{span}, recorded every {self.spacing:g} s; "
        if self.time_scale == 1.0:
            text += f"replayed in real time, one sample every {self.step:g} s; "
        else:
            text += (
                f"replayed one sample every {self.step:g} s, time compressed "
                f"{self.time_scale:g}x (--real-time keeps the recorded time); "
            )
        low, high = self.recorded
        if self.rescaled is None:
            return text + f"values as recorded, {low:,.6g} to {high:,.6g} {unit}"
        return text + (
            f"values {low:,.6g} to {high:,.6g} rescaled linearly to {self.rescaled[0]:g} to "
            f"{self.rescaled[1]:g} {unit} (--keep-values keeps the recorded values)"
        )


def replay_trace(
    path: str | os.PathLike[str],
    step: float = 1.0,
    low: float | None = PAPER_LOW,
    high: float | None = PAPER_HIGH,
    duration: float | None = None,
    column: str = "value",
    time_scale: float | None = None,
) -> TraceReplay:
    """``trace_workload``'s series, with what was done to it (``TraceReplay``).

    To replay in real time at the recording's own spacing, pass ``time_scale=1`` and
    ``step=recording_spacing(path)``; to keep the recorded values, ``low=None, high=None``.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "trace.csv"
    ...     _ = path.write_text("timestamp,value\\n2024-01-01 00:00,10\\n2024-01-01 00:05,30\\n")
    ...     print(replay_trace(path).describe())
    2 samples from 2024-01-01 00:00 to 2024-01-01 00:05, recorded every 300 s; replayed one
    sample every 1 s, time compressed 300x (--real-time keeps the recorded time); values 10 to
    30 rescaled linearly to 200 to 500 tuples/s (--keep-values keeps the recorded values)
    """
    name = "trace_workload"
    check_number(name, "step", step, minimum=0, exclusive_minimum=True)
    if time_scale is not None:
        check_number(name, "time_scale", time_scale, minimum=0, exclusive_minimum=True)
    if (low is None) != (high is None):
        raise ValueError(
            f"{name}: low={low!r}, high={high!r} is not allowed: give both, or neither to keep "
            "the recorded values"
        )
    if low is not None:
        check_number(name, "low", low, minimum=0)
        check_number(name, "high", high, minimum=low, exclusive_minimum=True)
    seconds, values = read_trace(path, column)
    spacing = float(np.median(np.diff(seconds)))
    scale = spacing / step if time_scale is None else time_scale
    covered = float(seconds[-1]) / scale
    if duration is None:
        times = np.arange(math.floor(covered / step * (1 + 1e-12)) + 1) * step
    else:
        times = _sample_times(name, duration, step)
        if times[-1] > covered * (1 + 1e-12):
            raise ValueError(
                f"{name}: duration={duration!r} is not allowed: the trace covers "
                f"{covered + step:g} s of replay at time_scale={scale:g}"
            )
    replayed: np.ndarray = np.interp(times * scale, seconds, values)
    smallest, largest = float(replayed.min()), float(replayed.max())
    start = trace_start(path)
    if low is None or high is None:
        return TraceReplay(replayed, step, scale, spacing, (smallest, largest), None, start)
    if smallest == largest:
        raise ValueError(
            f"{name}: the replayed trace is constant ({smallest:g}) and cannot be rescaled to "
            f"[{low:g}, {high:g}]; pass low=None, high=None to keep its values"
        )
    # np.interp hits the end points exactly, so the result stays within [low, high].
    rescaled: np.ndarray = np.interp(replayed, [smallest, largest], [low, high])
    return TraceReplay(
        rescaled, step, scale, spacing, (smallest, largest), (float(low), float(high)), start
    )


def recording_spacing(path: str | os.PathLike[str], column: str = "value") -> float:
    """The median spacing of a trace's timestamps, in seconds: its real-time replay ``step``."""
    seconds, _ = read_trace(path, column)
    return float(np.median(np.diff(seconds)))


def trace_start(path: str | os.PathLike[str]) -> datetime | None:
    """The first timestamp of a trace when it is a datetime (naive; UTC if offsets were given),
    ``None`` when timestamps are plain seconds. Call after ``read_trace``, which checks them."""
    with Path(path).open(newline="", encoding="utf-8") as file:
        first = next(csv.DictReader(file))["timestamp"]
    try:
        float(first)
    except ValueError:
        return datetime(1970, 1, 1) + timedelta(seconds=epoch_seconds(first))
    return None


def _minute(moment: np.datetime64) -> str:
    return str(moment.astype("datetime64[m]")).replace("T", " ")


def _parsed(
    path: str | os.PathLike[str],
    column: str,
    texts: list[str],
    parse: Callable[[str], float],
    expected: str,
) -> np.ndarray:
    """``parse`` applied to a column; the first text that fails or gives no finite number is
    reported with its line."""
    parsed = np.empty(len(texts))
    for index, text in enumerate(texts):
        try:
            parsed[index] = parse(text)
        except (TypeError, ValueError):  # TypeError: a row shorter than the header gives None
            parsed[index] = math.nan
        if not math.isfinite(parsed[index]):
            raise ValueError(f"{path}, line {index + 2}: {column}={text!r} is not {expected}")
    return parsed


def epoch_seconds(stamp: str) -> float:
    """An ISO datetime as seconds since 1970; offsets count in UTC, naive times as written."""
    moment = datetime.fromisoformat(stamp)
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return (moment - datetime(1970, 1, 1)).total_seconds()
