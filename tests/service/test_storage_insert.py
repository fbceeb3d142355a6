"""SQLite's INSERT of many rows to a statement leaves the table one row at a time leaves."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from scaling import Decision
from service.storage import Storage
from service.store import Store

SPEC = {"filter": {"name": "raw"}, "policy": {"capacity": 50.0}, "guards": []}


def varied(times: range, chance: random.Random, reports: float = 0.5) -> list[Decision]:
    """Decisions with every column's kinds of value: NULLs, records or none, text; the share
    ``reports`` of them with what a job reports (backlog, running, processed)."""
    made = []
    for t in times:
        reported = chance.random() < reports
        made.append(
            Decision(
                float(t),
                chance.uniform(0.0, 1e6),
                chance.uniform(0.0, 1e6),
                chance.randint(0, 2**53),
                chance.randint(0, 50),
                chance.choice(["up", "down", "none"]),
                chance.choice(["filtered 1.0 needs 1 = 1", "é ☃ 'quoted' \"too\"", ""]),
                chance.uniform(0.0, 1e9) if reported else None,
                chance.randint(0, 99) if reported else None,
                chance.uniform(0.0, 1e6) if reported else None,
                chance.choice(["Steady", "ScaledUp"]),
                chance.choice([None, {"model": "threshold", "needed": t, "x": [0.5, None]}]),
            )
        )
    return made


def table(path: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as db:
        rows = db.execute(
            "SELECT *, typeof(t), typeof(previous), typeof(backlog), typeof(running), "
            "typeof(processed), typeof(explain) FROM decisions"
        )
        return sorted(rows.fetchall(), key=repr)


@pytest.mark.parametrize("reports", (0.5, 0.0, 0.01))
@pytest.mark.parametrize("sizes", ([1], [99, 1], [100], [101, 100], [250, 3, 200]))
def test_rows_inserted_by_the_hundred_are_the_rows_inserted_one_by_one(
    tmp_path: Path, sizes: list[int], reports: float
) -> None:
    chance = random.Random(repr((sizes, reports)))
    batches, start = [], 0
    for size in sizes:
        batches.append(varied(range(start, start + size), chance, reports))
        start += size
    paths = []
    for name, insert in (("plain", Store._insert), ("fast", Storage._insert)):
        storage = Storage(tmp_path / name / "steadyscale.db")
        for stream_id in ("a", "b"):
            storage.put_stream(stream_id, SPEC, 1, {"t": None})
            for batch in batches:
                with storage._writing() as db:
                    insert(storage, db, stream_id, batch)
        storage.close()
        paths.append(storage.path)
    plain, fast = (table(path) for path in paths)
    assert len(plain) == 2 * sum(sizes)
    assert fast == plain


def test_a_duplicate_row_in_a_full_statement_stores_nothing_of_the_batch(tmp_path: Path) -> None:
    storage = Storage(tmp_path / "steadyscale.db")
    storage.put_stream("a", SPEC, 1, {"t": None})
    batch = varied(range(100), random.Random(1), reports=0.0)
    batch[60] = batch[59]
    with pytest.raises(sqlite3.IntegrityError), storage._writing() as db:
        storage._insert(db, "a", batch)
    storage.close()
    assert table(storage.path) == []


def test_none_binds_as_null_with_the_adapter_as_without_it(tmp_path: Path) -> None:
    """``service.storage`` registers an adapter for None (a shortcut); the rows are the same."""
    key = (type(None), sqlite3.PrepareProtocol)
    adapter = sqlite3.adapters[key]
    tables = []
    for name in ("with", "without"):
        if name == "without":
            del sqlite3.adapters[key]
        try:
            with sqlite3.connect(tmp_path / f"{name}.db") as db:
                db.execute("CREATE TABLE t (a, b REAL, c INTEGER, d TEXT)")
                db.executemany(
                    "INSERT INTO t VALUES (?, ?, ?, ?)", [(None,) * 4, (1, None, 2, None)]
                )
                rows = db.execute("SELECT *, typeof(a), typeof(b), typeof(c), typeof(d) FROM t")
                tables.append(rows.fetchall())
        finally:
            sqlite3.adapters[key] = adapter
    assert tables[0] == tables[1]
    assert tables[0][0][4:] == ("null",) * 4
