"""Results that survive: a folder per grid, cells stored as they finish, resumed on a rerun.

Importing this module needs no PySpark (``claim_folder`` runs before Spark starts, and in
installs without the ``[spark]`` extra); ``run_stored`` imports it when it runs.

``run_stored`` runs the cells that ``DIR/cells.parquet`` does not hold yet as Spark jobs
(batches of cells; each batch is appended once it has finished, so an interrupted run loses at
most the batch in flight and a rerun skips everything done). A cell's id (``cell_id``) is a hash
of everything it depends on, so a changed parameter is a new cell and never reuses an old
result.

One folder holds one grid (``claim_folder``): ``DIR/grid.json`` records it, seeds aside, so that
a rerun, or one with more seeds, resumes, and a run of another grid into the same folder is
refused before Spark starts (``force=True``, ``--force``, clears the folder's results first)
rather than mixing two grids in ``cells.parquet`` and leaving the other grid's plots beside the
report.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import shutil
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any


def cell_id(cell: Any) -> str:
    """A stable id of everything ``cell`` (a dataclass) depends on (16 hex digits of a SHA-256).

    >>> @dataclasses.dataclass(frozen=True)
    ... class Cell:
    ...     config: str
    ...     seed: int
    ...     snr: float
    >>> a = Cell(config="x", seed=1, snr=1.0)
    >>> cell_id(a) == cell_id(dataclasses.replace(a)) != cell_id(dataclasses.replace(a, seed=2))
    True

    ``grid_key`` leaves the seed out:

    >>> grid_key([a]) == grid_key([a, dataclasses.replace(a, seed=2)])
    True
    >>> grid_key([a]) == grid_key([dataclasses.replace(a, snr=2.0)])
    False
    """
    fields = dataclasses.asdict(cell)
    fields.pop("config", None)  # a label, not an input
    text = json.dumps(fields, sort_keys=True, default=list)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


GRID_FILE = "grid.json"
RESULTS = ("cells.parquet", GRID_FILE, "*.csv", "*.md", "*.png")
"""What a run writes into its folder: what ``force`` clears (nothing else is touched)."""


def grid_key(cells: Sequence[Any]) -> str:
    """An id of the grid ``cells`` belong to, whatever their seeds (16 hex digits).

    (examples: ``cell_id``)
    """
    points = set()
    for cell in cells:
        fields = dataclasses.asdict(cell)
        fields.pop("config", None)
        fields.pop("seed", None)
        points.add(json.dumps(fields, sort_keys=True, default=list))
    return hashlib.sha256("\n".join(sorted(points)).encode()).hexdigest()[:16]


def claim_folder(out: Path, cells: Sequence[Any], force: bool = False) -> None:
    """Make ``out`` the folder of the grid of ``cells``, or refuse (``ValueError``).

    A new or empty folder, or one holding this grid's results (``GRID_FILE`` says so, seeds
    aside), is taken; one holding another grid's, or results without a ``GRID_FILE``, is
    refused unless ``force``, which deletes the ``RESULTS`` there first. Pure Python and quick:
    callers run it before Spark starts.
    """
    key = grid_key(cells)
    record = out / GRID_FILE
    held = [path for pattern in RESULTS for path in out.glob(pattern)] if out.is_dir() else []
    if held and not force:
        found = json.loads(record.read_text(encoding="utf-8")) if record.exists() else None
        if found is None or found.get("grid") != key:
            what = f"grid {found['grid']} ({found['cells']} cells)" if found else "results"
            raise ValueError(
                f"{out} holds another {what}, not this one ({len(cells)} cells); write to a new "
                "--out folder, or pass --force to delete the results there and start again"
            )
    if force:
        for path in held:
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink()
    out.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps({"grid": key, "cells": len(cells)}) + "\n", encoding="utf-8")


def run_stored(
    cells: Sequence[Any],
    out: Path,
    spark: Any,
    batch_size: int | None = None,
    *,
    run: Callable[[Any], Mapping[str, Any]],
    schema: Any,
) -> Any:
    """Run the cells ``out/cells.parquet`` does not hold yet; a DataFrame of the rows of ``cells``.

    The engine under the sweeps and comparisons of ``simulator.experiments``: cells (any frozen
    dataclass) run in batches through ``run_cells_spark`` (``run`` of one cell gives its row, of
    ``schema``), each batch appended to the store when it finishes. The DataFrame has
    ``cell_id``, the row's columns and ``grid_order`` (the cell's index in ``cells``).
    """
    from tqdm import tqdm

    from simulator.spark.cells import collect_rows, run_cells_spark

    claim_folder(out, cells)
    store = out / "cells.parquet"
    ids = [cell_id(cell) for cell in cells]
    done = _stored_ids(spark, store)
    todo = [(i, cell) for i, cell in enumerate(cells) if ids[i] not in done]
    size = batch_size or max(200, math.ceil(len(todo) / 10))
    batches = [todo[start : start + size] for start in range(0, len(todo), size)]
    _say(f"{len(cells)} cells, {len(cells) - len(todo)} already in {store}, "
         f"{len(todo)} to run in {len(batches)} batches")  # fmt: skip
    # A bar on a terminal, a line per batch in a log (tqdm's own rule: disable=None).
    with tqdm(total=len(todo), unit="cell", file=sys.stderr, disable=None) as bar:
        for number, batch in enumerate(batches, 1):
            started = time.perf_counter()
            results = run_cells_spark(spark, [cell for _, cell in batch], run, schema)
            rows = collect_rows(results)
            results.unpersist()
            records = [{"cell_id": ids[i], **row} for (i, _), row in zip(batch, rows, strict=True)]
            spark.createDataFrame(records).write.mode("append").parquet(str(store))
            bar.update(len(batch))
            if bar.disable:
                _say(f"batch {number}/{len(batches)}: {len(batch)} cells in "
                     f"{time.perf_counter() - started:.1f} s")  # fmt: skip
    stored = spark.read.parquet(str(store))
    wanted = spark.createDataFrame([(cid, order) for order, cid in enumerate(ids)],
                                   "cell_id string, grid_order long")  # fmt: skip
    return stored.dropDuplicates(["cell_id"]).join(wanted, "cell_id")


def _stored_ids(spark: Any, store: Path) -> set[str]:
    if not store.exists():
        return set()
    return {row.cell_id for row in spark.read.parquet(str(store)).select("cell_id").collect()}


def _say(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()
