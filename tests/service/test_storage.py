"""Storage on both backends: what one transaction writes, pruning, revisions, reading it back
later, schema versions, and writers racing on one stream.

Every test taking ``storage`` (or ``open_again``) runs on SQLite and on PostgreSQL; the
PostgreSQL runs need a server (tests/service/conftest.py starts one).
"""

from __future__ import annotations

import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest

from scaling import Decision
from service import postgres
from service import storage as sqlite_storage
from service.postgres import PostgresStorage
from service.rows import Applied, Checkpoint, StoredStream
from service.storage import Storage
from service.store import StaleRevision, StorageBusy, StorageUnavailable, Store
from tests.service.conftest import PostgresServer

SPEC = {"filter": {"name": "raw"}, "policy": {"capacity": 50.0}, "guards": []}


def decisions(times: range, operators: int = 2) -> list[Decision]:
    return [
        Decision(float(t), 100.0 + t, 100.0 + t, operators, operators, "none", f"sample {t}")
        for t in times
    ]


@pytest.fixture
def open_again(database_url: str | None, tmp_path: Path) -> Callable[[], Store]:
    """Opens the test's database (another instance each call, as another replica would)."""
    if database_url is None:
        path = tmp_path / "deep" / "steadyscale.db"
        return lambda: Storage(path)
    return lambda: PostgresStorage(database_url)


@pytest.fixture
def storage(open_again: Callable[[], Store]) -> Iterator[Store]:
    storage = open_again()
    storage.put_stream("orders", SPEC, 1, {"t": None})
    yield storage
    storage.close()


def append(storage: Store, stream_id: str, rows: list[Decision], retention: int = 1000) -> str:
    revision = storage.get_stream(stream_id).revision
    return storage.append(stream_id, revision, rows, {"t": rows[-1].t}, retention=retention)


def test_the_file_is_created_with_its_directory_in_wal_mode(tmp_path: Path) -> None:
    storage = Storage(tmp_path / "deep" / "steadyscale.db")
    storage.close()
    assert storage.path.exists()
    with sqlite3.connect(storage.path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert db.execute("PRAGMA user_version").fetchone() == (4,)


def test_postgresql_records_its_schema_version(postgres_url: str) -> None:
    PostgresStorage(postgres_url).close()
    with psycopg.connect(postgres_url) as db:
        assert db.execute("SELECT version FROM schema_version").fetchall() == [(4,)]


def test_a_database_from_a_newer_steadyscale_is_refused_untouched(
    storage: Store, open_again: Callable[[], Store]
) -> None:
    append(storage, "orders", decisions(range(3)))
    storage.close()
    if isinstance(storage, Storage):
        with sqlite3.connect(storage.path) as db:
            db.execute("PRAGMA user_version = 5")
    else:
        assert isinstance(storage, PostgresStorage)
        with psycopg.connect(storage.url) as db:
            db.execute("UPDATE schema_version SET version = 5")
    with pytest.raises(OSError, match="schema version 5; this steadyscale reads versions up to 4"):
        open_again()


def create_version_1(database_url: str | None, path: Path) -> None:
    """A database as steadyscale's schema version 1 left it: one stream, two decisions, no
    columns for what the job reported."""
    stream = "INSERT INTO streams VALUES ('orders', '{}', 1, '{}', 2, 1.0, 2, 'r1')"
    rows = [
        "INSERT INTO decisions VALUES ('orders', 0.0, 100.0, 100.0, 1, 2, 'up', 'first')",
        "INSERT INTO decisions VALUES ('orders', 1.0, 101.0, 101.0, 2, 2, 'none', 'second')",
    ]
    if database_url is None:
        with sqlite3.connect(path) as db:
            db.executescript(sqlite_storage._MIGRATIONS[0])
            for statement in (stream, *rows, "PRAGMA user_version = 1"):
                db.execute(statement)
        return
    with psycopg.connect(database_url) as pg:
        pg.execute(postgres._MIGRATIONS[0])
        pg.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        for statement in (stream, *rows, "INSERT INTO schema_version VALUES (1)"):
            pg.execute(statement)


def test_a_version_1_database_is_upgraded_once_keeping_its_decisions(
    database_url: str | None, tmp_path: Path
) -> None:
    path = tmp_path / "steadyscale.db"
    create_version_1(database_url, path)
    opened: list[Store] = []

    def open_one() -> None:
        opened.append(Storage(path) if database_url is None else PostgresStorage(database_url))

    # Replicas of the new version starting together: one upgrades, the others find it done.
    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(opened) == 4
    storage = opened[0]
    old = storage.history("orders", None, 10)
    # Decisions from before the reason codes read back with the code of their action.
    assert old == [
        Decision(0.0, 100.0, 100.0, 1, 2, "up", "first", code="ScaledUp"),
        Decision(1.0, 101.0, 101.0, 2, 2, "none", "second", code="Steady"),
    ]
    # The state of version 3's streams row is the checkpoint of every sample applied.
    assert storage.load("orders") == (
        StoredStream("orders", {}, 1, 2, 1.0, "r1"),
        Checkpoint({}, 1.0, 0.0, []),
    )
    reported = Decision(2.0, 90.0, 95.0, 2, 2, "none", "third", 40.0, 2, 88.5)
    storage.append("orders", "r1", [reported], {}, retention=10)
    assert opened[3].history("orders", None, 10) == [*old, reported]
    for each in opened:
        each.close()


def create_version_2(path: Path) -> None:
    """A SQLite database as steadyscale's schema version 2 left it: decisions with what the
    job reported, no reason code and no record."""
    rows = [
        "INSERT INTO decisions VALUES ('orders', 0.0, 100.0, 99.0, 1, 3, 'up', 'a', 10.0, 1, 90.0)",
        "INSERT INTO decisions VALUES ('orders', 1.0, 60.0, 80.0, 3, 2, 'down', 'b', 0.0, 3, 60.0)",
        "INSERT INTO decisions VALUES ('orders', 2.0, 70.0, 75.0, 2, 2, 'none', 'c', NULL, NULL, "
        "NULL)",
    ]
    with sqlite3.connect(path) as db:
        for script in sqlite_storage._MIGRATIONS[:2]:
            db.executescript(script)
        db.execute("INSERT INTO streams VALUES ('orders', '{}', 1, '{}', 2, 2.0, 2, 'r1')")
        for statement in (*rows, "PRAGMA user_version = 2"):
            db.execute(statement)


def test_a_version_2_database_migrates_to_4_and_its_decisions_get_their_action_s_code(
    tmp_path: Path,
) -> None:
    path = tmp_path / "steadyscale.db"
    create_version_2(path)
    storage = Storage(path)
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (4,)
    assert storage.history("orders", None, 10) == [
        Decision(0.0, 100.0, 99.0, 1, 3, "up", "a", 10.0, 1, 90.0, code="ScaledUp"),
        Decision(1.0, 60.0, 80.0, 3, 2, "down", "b", 0.0, 3, 60.0, code="ScaledDown"),
        Decision(2.0, 70.0, 75.0, 2, 2, "none", "c", code="Steady"),
    ]
    # New decisions keep their code and record, beside the old ones.
    explain = {"model": "threshold", "inputs": {"filtered": 75.0, "spread": None}, "needed": 2}
    new = Decision(3.0, 70.0, 75.0, 2, 2, "none", "d", code="HeldForCost", explain=explain)
    storage.append("orders", "r1", [new], {}, retention=10)
    storage.close()
    again = Storage(path)  # opened once more: nothing migrates twice
    assert again.history("orders", 2.0, 10) == [new]
    assert again.latest_decision("orders") == new
    again.close()


def test_what_the_job_reported_is_stored_with_each_decision(storage: Store) -> None:
    rows = [
        Decision(
            0.0,
            120.0,
            120.0,
            1,
            3,
            "up",
            "a",
            backlog=5e14,
            running=1,
            processed=0.0,
            code="ScaledUp",
            explain={"model": "cost", "candidates": [{"total": 1.5}]},
        ),
        Decision(1.0, 130.0, 125.0, 3, 3, "none", "b"),
        Decision(
            2.0,
            140.0,
            130.0,
            2,
            3,
            "up",
            "c",
            backlog=0.0,
            running=2,
            processed=1e12,
            code="WaitingToLand",
        ),
        Decision(3.0, 150.0, 135.0, 3, 3, "none", "d", running=1_000_000_000),
    ]
    append(storage, "orders", rows)
    assert storage.history("orders", None, 10) == rows
    assert storage.latest_decision("orders") == rows[-1]
    assert storage.latest_decisions() == {"orders": rows[-1]}


def test_replicas_opening_an_empty_database_together_create_the_schema_once(
    open_again: Callable[[], Store],
) -> None:
    opened: list[Store] = []
    threads = [threading.Thread(target=lambda: opened.append(open_again())) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(opened) == 4
    opened[0].put_stream("orders", SPEC, 1, {"t": None})
    assert [s.id for s in opened[3].list_streams()] == ["orders"]
    for storage in opened:
        storage.close()


def test_a_stream_reads_back_as_stored(storage: Store) -> None:
    stream = storage.get_stream("orders")
    assert (stream.id, stream.spec, stream.initial_operators) == ("orders", SPEC, 1)
    assert (stream.operators, stream.t) == (1, None)
    loaded, checkpoint = storage.load("orders")
    assert loaded == stream and (checkpoint.state, checkpoint.t, checkpoint.after) == (
        {"t": None},
        None,
        [],
    )
    assert storage.get_stream("missing") is None and storage.load("missing") is None


def test_append_stores_decisions_state_and_where_the_stream_stands(storage: Store) -> None:
    rows = decisions(range(5), operators=3)
    revision = append(storage, "orders", rows)
    stream, checkpoint = storage.load("orders")
    assert (stream.operators, stream.t, stream.revision) == (3, 4.0, revision)
    assert (checkpoint.state, checkpoint.t, checkpoint.after) == ({"t": 4.0}, 4.0, [])
    assert storage.history("orders", None, 100) == rows
    assert storage.history("orders", 1.0, 2) == rows[2:4]
    assert storage.latest_decision("orders") == rows[-1]
    applied = storage.applied_samples("orders", [1.0, 3.0, 9.0])
    assert {t: found[0] for t, found in applied.items()} == {1.0: 101.0, 3.0: 103.0}


def test_append_refuses_a_stale_revision_and_stores_nothing(storage: Store) -> None:
    old = storage.get_stream("orders").revision
    append(storage, "orders", decisions(range(2)))
    before = storage.load("orders")
    with pytest.raises(StaleRevision):
        storage.append("orders", old, decisions(range(2, 4)), {"t": 3.0}, retention=1000)
    assert storage.load("orders") == before
    assert len(storage.history("orders", None, 100)) == 2


def test_a_failing_append_rolls_back_the_whole_transaction(storage: Store) -> None:
    append(storage, "orders", decisions(range(3)))
    before = storage.load("orders")
    # t=2 is stored already: the insert fails after the state update, which must be undone.
    with pytest.raises((sqlite3.IntegrityError, psycopg.IntegrityError)):
        append(storage, "orders", decisions(range(2, 5)))
    assert storage.load("orders") == before
    assert storage.latest_decision("orders").t == 2.0


def test_retention_keeps_the_newest_decisions(storage: Store) -> None:
    append(storage, "orders", decisions(range(6)), retention=4)
    append(storage, "orders", decisions(range(6, 9)), retention=4)
    assert [d.t for d in storage.history("orders", None, 100)] == [5.0, 6.0, 7.0, 8.0]
    append(storage, "orders", decisions(range(9, 10)), retention=4)
    assert [d.t for d in storage.history("orders", None, 100)] == [6.0, 7.0, 8.0, 9.0]


def test_replacing_a_stream_forgets_its_history_and_deleting_removes_it(storage: Store) -> None:
    append(storage, "orders", decisions(range(3)))
    assert storage.put_stream("orders", SPEC, 5, {"t": None}) == "replaced"
    assert storage.history("orders", None, 100) == []
    assert storage.get_stream("orders").operators == 5
    assert storage.delete_stream("orders") is True
    assert storage.delete_stream("orders") is False
    assert storage.list_streams() == [] and storage.latest_decisions() == {}


def test_many_duplicate_candidates_are_looked_up_in_chunks(storage: Store) -> None:
    append(storage, "orders", decisions(range(1200)), retention=2000)
    times = [float(t) for t in range(0, 2400, 2)]
    assert len(storage.applied_samples("orders", times)) == 600


def test_another_instance_on_the_database_reads_everything(
    storage: Store, open_again: Callable[[], Store]
) -> None:
    storage.put_stream("clicks", SPEC, 2, {"t": None})
    append(storage, "orders", decisions(range(3)))
    again = open_again()
    try:
        assert again.list_streams() == storage.list_streams()
        assert again.latest_decisions() == {"orders": decisions(range(3))[-1]}
        assert again.load("orders") == storage.load("orders")
    finally:
        again.close()


def test_threads_append_to_their_own_streams(storage: Store) -> None:
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


def test_a_closed_storage_refuses_calls(storage: Store) -> None:
    storage.ping()
    storage.close()
    with pytest.raises(RuntimeError, match="closed"):
        storage.ping()


def test_instances_racing_on_one_stream_serialise_and_the_losers_store_nothing(
    storage: Store, open_again: Callable[[], Store]
) -> None:
    """Replicas that read the same revision and append at once: exactly one commits."""
    others = [open_again() for _ in range(3)]
    revision = storage.get_stream("orders").revision
    barrier = threading.Barrier(len(others))
    outcomes: list[str] = []

    def race(replica: Store, index: int) -> None:
        rows = decisions(range(index * 10, index * 10 + 5))
        barrier.wait()
        try:
            replica.append("orders", revision, rows, {"t": index}, retention=1000)
            outcomes.append(f"won {index}")
        except StaleRevision:
            outcomes.append("stale")

    run_together(race, others)
    winners = [o for o in outcomes if o.startswith("won")]
    assert len(winners) == 1 and outcomes.count("stale") == 2
    index = int(winners[0].split()[1])
    assert storage.history("orders", None, 100) == decisions(range(index * 10, index * 10 + 5))
    assert storage.load("orders")[1].state == {"t": index}


def test_between_checkpoints_only_the_samples_are_written_and_load_returns_them(
    storage: Store,
) -> None:
    append(storage, "orders", decisions(range(3)))
    before = time.time()
    revision = storage.get_stream("orders").revision
    rows = decisions(range(3, 6), operators=4)
    revision = storage.append("orders", revision, rows, None, retention=1000)
    stream, checkpoint = storage.load("orders")
    assert (stream.t, stream.operators, stream.revision) == (5.0, 4, revision)
    assert (checkpoint.state, checkpoint.t) == ({"t": 2.0}, 2.0) and checkpoint.written <= before
    assert checkpoint.after == [
        Applied(d.t, d.volume, d.backlog, d.running, d.processed, d.filtered, d.previous,
                d.operators, d.action, d.code)
        for d in rows
    ]  # fmt: skip
    storage.append("orders", revision, decisions(range(6, 7)), {"t": 6.0}, retention=1000)
    _, checkpoint = storage.load("orders")
    assert (checkpoint.state, checkpoint.t, checkpoint.after) == ({"t": 6.0}, 6.0, [])
    assert checkpoint.written >= before


def test_retention_never_prunes_a_sample_the_checkpoint_has_not_taken(storage: Store) -> None:
    append(storage, "orders", decisions(range(3)), retention=4)  # checkpoint at t=2
    revision = storage.get_stream("orders").revision
    revision = storage.append("orders", revision, decisions(range(3, 9)), None, retention=4)
    # 9 retained, 4 allowed: only those up to the checkpoint could go.
    assert [d.t for d in storage.history("orders", None, 100)] == [3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
    assert [a.t for a in storage.load("orders")[1].after] == [3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
    storage.append("orders", revision, decisions(range(9, 10)), {"t": 9.0}, retention=4)
    assert [d.t for d in storage.history("orders", None, 100)] == [6.0, 7.0, 8.0, 9.0]


def test_a_put_racing_another_creates_the_stream_once(
    storage: Store, open_again: Callable[[], Store]
) -> None:
    others = [open_again() for _ in range(4)]
    barrier = threading.Barrier(len(others))
    outcomes: list[str] = []

    def put(replica: Store, index: int) -> None:
        barrier.wait()
        outcomes.append(replica.put_stream("clicks", SPEC, 2, {"t": None}, replace=False))

    run_together(put, others)
    assert sorted(outcomes) == ["created", "unchanged", "unchanged", "unchanged"]


def test_revision_is_the_stored_one(storage: Store) -> None:
    assert storage.revision("orders") == storage.get_stream("orders").revision
    assert append(storage, "orders", decisions(range(2))) == storage.revision("orders")
    assert storage.revision("missing") is None


def test_an_unreachable_postgresql_is_an_error_naming_it(tmp_path: Path) -> None:
    with socket_port() as port:
        with pytest.raises(
            OSError, match=f"cannot open the database postgresql://127.0.0.1:{port}"
        ):
            PostgresStorage(f"postgresql://nobody:secret@127.0.0.1:{port}/db", timeout=1.0)


def test_a_postgresql_outage_is_unavailable_and_readiness_recovers(
    lone_postgres: PostgresServer,
) -> None:
    """The server stopped and started again under an open storage."""
    server = lone_postgres
    storage = PostgresStorage(server.url, timeout=1.0)
    storage.put_stream("orders", SPEC, 1, {"t": None})
    revision = storage.get_stream("orders").revision
    server.halt()
    with pytest.raises(StorageUnavailable):
        storage.append("orders", revision, decisions(range(2)), {"t": 1.0}, retention=10)
    with pytest.raises(StorageUnavailable):
        storage.ping()
    server.start()
    # The pool reconnects in the background, backing off: readiness returns within seconds.
    deadline = time.monotonic() + 30.0
    while True:
        try:
            storage.ping()
            break
        except StorageUnavailable:
            assert time.monotonic() < deadline, "still unavailable 30 s after the restart"
            time.sleep(0.2)
    assert storage.write_failure is None
    assert storage.history("orders", None, 10) == []
    append(storage, "orders", decisions(range(2)))
    storage.close()


@contextmanager
def socket_port() -> Iterator[int]:
    """A loopback port nothing listens on (bound, not listening, while the block runs)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        yield probe.getsockname()[1]


def test_a_postgresql_append_that_may_not_wait_is_busy_while_the_stream_is_locked(
    postgres_url: str,
) -> None:
    storage = PostgresStorage(postgres_url)
    storage.put_stream("orders", SPEC, 1, {"t": None})
    revision = storage.get_stream("orders").revision
    with psycopg.connect(postgres_url) as other:
        other.execute("SELECT 1 FROM streams WHERE id = 'orders' FOR UPDATE")
        with pytest.raises(StorageBusy):
            storage.append("orders", revision, decisions(range(2)), {"t": 1.0}, retention=10,
                           wait=False)  # fmt: skip
    storage.append("orders", revision, decisions(range(2)), {"t": 1.0}, retention=10, wait=False)
    assert len(storage.history("orders", None, 10)) == 2
    storage.close()


def test_puts_and_deletes_racing_on_one_stream_never_fail(
    storage: Store, open_again: Callable[[], Store]
) -> None:
    """Replicas creating, replacing and deleting one stream at once: each call answers."""
    others = [open_again() for _ in range(3)]
    errors: list[BaseException] = []

    def work(replica: Store, index: int) -> None:
        try:
            for round_ in range(40):
                if index == 0:
                    replica.delete_stream("clicks")
                else:
                    replica.put_stream("clicks", SPEC, index, {"t": None}, replace=round_ % 2 == 0)
        except BaseException as error:  # noqa: BLE001 - any failure is the test's finding
            errors.append(error)

    run_together(work, others)
    assert errors == []
    stream = storage.get_stream("clicks")
    assert stream is None or stream.initial_operators in (1, 2)


def run_together(work: Callable[[Store, int], None], others: list[Store]) -> None:
    """``work(replica, index)`` on each of ``others`` at once, in threads; then close them."""
    threads = [threading.Thread(target=work, args=(o, i)) for i, o in enumerate(others)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for other in others:
        other.close()


def test_a_file_another_process_is_writing_to_is_opened_once_it_is_done(tmp_path: Path) -> None:
    # Switching a file to WAL while another connection holds a write transaction on it gets
    # "database is locked" at once, not after the busy timeout (a replica migrating the file
    # while others start: seen once in CI as one of four replicas failing to open).
    path = tmp_path / "steadyscale.db"
    writer = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    writer.execute("CREATE TABLE other (x)")
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("INSERT INTO other VALUES (1)")
    threading.Timer(0.3, writer.execute, ("COMMIT",)).start()
    started = time.monotonic()
    Storage(path, busy_timeout=5.0).close()
    assert time.monotonic() - started >= 0.25
    writer.execute("BEGIN IMMEDIATE")  # held past the timeout: a clear error, after it
    started = time.monotonic()
    with pytest.raises(OSError, match="cannot open the database .*: .*locked"):
        Storage(path, busy_timeout=0.3)
    assert time.monotonic() - started >= 0.25
    writer.execute("COMMIT")
    writer.close()
