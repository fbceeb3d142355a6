"""SQLite storage: what one transaction writes, pruning, revisions, and reading it back later."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from scaling import Decision
from service.storage import StaleRevision, Storage

SPEC = {"filter": {"name": "raw"}, "policy": {"capacity": 50.0}, "guards": []}


def decisions(times: range, operators: int = 2) -> list[Decision]:
    return [
        Decision(float(t), 100.0 + t, 100.0 + t, operators, operators, "none", f"sample {t}")
        for t in times
    ]


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[Storage]:
    storage = Storage(tmp_path / "deep" / "steadyscale.db")
    storage.put_stream("orders", SPEC, 1, {"t": None})
    yield storage
    storage.close()


def append(storage: Storage, stream_id: str, rows: list[Decision], retention: int = 1000) -> str:
    revision = storage.get_stream(stream_id).revision
    return storage.append(stream_id, revision, rows, {"t": rows[-1].t}, retention=retention)


def test_the_file_is_created_with_its_directory_in_wal_mode(storage: Storage) -> None:
    assert storage.path.exists()
    with sqlite3.connect(storage.path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert db.execute("PRAGMA user_version").fetchone() == (1,)


def test_a_stream_reads_back_as_stored(storage: Storage) -> None:
    stream = storage.get_stream("orders")
    assert (stream.id, stream.spec, stream.initial_operators) == ("orders", SPEC, 1)
    assert (stream.operators, stream.t) == (1, None)
    assert storage.load("orders") == (stream, {"t": None})
    assert storage.get_stream("missing") is None and storage.load("missing") is None


def test_append_stores_decisions_state_and_where_the_stream_stands(storage: Storage) -> None:
    rows = decisions(range(5), operators=3)
    revision = append(storage, "orders", rows)
    stream, state = storage.load("orders")
    assert (stream.operators, stream.t, stream.revision) == (3, 4.0, revision)
    assert state == {"t": 4.0}
    assert storage.history("orders", None, 100) == rows
    assert storage.history("orders", 1.0, 2) == rows[2:4]
    assert storage.latest_decision("orders") == rows[-1]
    assert storage.applied_volumes("orders", [1.0, 3.0, 9.0]) == {1.0: 101.0, 3.0: 103.0}


def test_append_refuses_a_stale_revision_and_stores_nothing(storage: Storage) -> None:
    old = storage.get_stream("orders").revision
    append(storage, "orders", decisions(range(2)))
    before = storage.load("orders")
    with pytest.raises(StaleRevision):
        storage.append("orders", old, decisions(range(2, 4)), {"t": 3.0}, retention=1000)
    assert storage.load("orders") == before
    assert len(storage.history("orders", None, 100)) == 2


def test_a_failing_append_rolls_back_the_whole_transaction(storage: Storage) -> None:
    append(storage, "orders", decisions(range(3)))
    before = storage.load("orders")
    # t=2 is stored already: the insert fails after the state update, which must be undone.
    with pytest.raises(sqlite3.IntegrityError):
        append(storage, "orders", decisions(range(2, 5)))
    assert storage.load("orders") == before
    assert storage.latest_decision("orders").t == 2.0


def test_retention_keeps_the_newest_decisions(storage: Storage) -> None:
    append(storage, "orders", decisions(range(6)), retention=4)
    append(storage, "orders", decisions(range(6, 9)), retention=4)
    assert [d.t for d in storage.history("orders", None, 100)] == [5.0, 6.0, 7.0, 8.0]
    append(storage, "orders", decisions(range(9, 10)), retention=4)
    assert [d.t for d in storage.history("orders", None, 100)] == [6.0, 7.0, 8.0, 9.0]


def test_replacing_a_stream_forgets_its_history_and_deleting_removes_it(storage: Storage) -> None:
    append(storage, "orders", decisions(range(3)))
    assert storage.put_stream("orders", SPEC, 5, {"t": None}) == "replaced"
    assert storage.history("orders", None, 100) == []
    assert storage.get_stream("orders").operators == 5
    assert storage.delete_stream("orders") is True
    assert storage.delete_stream("orders") is False
    assert storage.list_streams() == [] and storage.latest_decisions() == {}


def test_many_duplicate_candidates_are_looked_up_in_chunks(storage: Storage) -> None:
    append(storage, "orders", decisions(range(1200)), retention=2000)
    times = [float(t) for t in range(0, 2400, 2)]
    assert len(storage.applied_volumes("orders", times)) == 600


def test_another_instance_on_the_file_reads_everything(storage: Storage) -> None:
    storage.put_stream("clicks", SPEC, 2, {"t": None})
    append(storage, "orders", decisions(range(3)))
    again = Storage(storage.path)
    try:
        assert again.list_streams() == storage.list_streams()
        assert again.latest_decisions() == {"orders": decisions(range(3))[-1]}
        assert again.load("orders") == storage.load("orders")
    finally:
        again.close()


def test_threads_append_to_their_own_streams(storage: Storage) -> None:
    names = [f"s{index}" for index in range(6)]
    for name in names:
        storage.put_stream(name, SPEC, 1, {"t": None})

    def work(name: str) -> None:
        for start in range(0, 50, 5):
            append(storage, name, decisions(range(start, start + 5)))

    threads = [threading.Thread(target=work, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for name in names:
        assert [d.t for d in storage.history(name, None, 100)] == [float(t) for t in range(50)]


def test_a_closed_storage_refuses_calls(storage: Storage) -> None:
    storage.ping()
    storage.close()
    with pytest.raises(RuntimeError, match="closed"):
        storage.ping()
