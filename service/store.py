"""The service's database: what it stores, and the SQL both backends share.

``Store`` is the contract, small on purpose; it stores and reads, and what the values mean is
``service.streams``'s business. ``service.storage.Storage`` keeps it in one SQLite file (the
embedded default, one host), ``service.postgres.PostgresStorage`` in one PostgreSQL database
shared by replicas. Both run the same statements, written once (``?`` for each parameter, ``%s``
for PostgreSQL's driver), and add only how they connect, start a write transaction and type
their columns; both create and upgrade their schema through ``service.migrations``, from per-version
statements, recording the version reached (SQLite's ``user_version``, a PostgreSQL table).

The statements are in three parts, by what they are for: a stream as a whole
(``service.store_streams``), a batch's reads and its write (``service.store_batches``) and the
stored decisions read back (``service.store_decisions``), all over the connections and errors of
``service.database``. ``Store`` puts them together; everyone imports it, and those errors, from
here.

A batch is exactly-once, whichever replica applies it, by ``append``: the decisions, a new
revision and, now and then, a checkpoint of the Scaler's state in one transaction, conditional
on the stream still being at the revision its writer read (compare-and-set: the loser stores
nothing, ``StaleRevision``). Between checkpoints the state is not written: ``load`` reads the
last checkpoint and the samples applied after it, which the caller feeds to the Scaler again
(``service.checkpoints``); every applied sample is a row of ``decisions``, kept until a
checkpoint has taken it.

Schema (version 4)::

    streams      id TEXT PRIMARY KEY, spec TEXT (Scaler.spec, JSON), initial_operators INTEGER,
                 operators INTEGER (after the last decision), t REAL (of the last decision,
                 NULL before any), retained INTEGER (rows in decisions), revision TEXT (new on
                 every write)
    checkpoints  stream TEXT PRIMARY KEY, state TEXT (Scaler.state_dict(), JSON, once the
                 sample at t was applied), t REAL (NULL: the state the stream was created
                 with), written REAL (Unix seconds); one row per stream (version 4: the state
                 was a column of streams, written at every batch)
    decisions    stream TEXT, t REAL, volume REAL, filtered REAL, previous INTEGER,
                 operators INTEGER, action TEXT, reason TEXT, backlog REAL, running INTEGER,
                 processed REAL (the last three as the job reported them with the sample, NULL
                 when it did not), code TEXT (the reason code), explain TEXT (the decision's
                 record, JSON; NULL in rows from before version 3); PRIMARY KEY (stream, t)
    probe        what the readiness probe writes after a failed write

One row per applied sample stores it (``t``, ``volume``, what the job reported) and its decision.
"""

from __future__ import annotations

from service.database import LOCK_TIMEOUT, StaleRevision, StorageBusy, StorageUnavailable
from service.store_batches import BatchStore
from service.store_decisions import DecisionStore
from service.store_streams import StreamStore

__all__ = ["LOCK_TIMEOUT", "StaleRevision", "StorageBusy", "StorageUnavailable", "Store"]


class Store(StreamStore, BatchStore, DecisionStore):
    """What the service needs of a database, with every statement both backends run.

    A backend provides ``close``, ``_connection`` (a connection for reads), ``_transaction``
    (one write transaction) and ``_snapshot`` (reads as of one moment), as
    ``service.database.Database`` asks; ``tests/service/test_storage.py`` runs the same tests
    against both. Every method may raise ``StorageUnavailable`` (nothing stored; the service
    answers 503); after a failed write, the service reports not ready until writes work again
    (``write_failure``, ``ping``).
    """
