"""How both storage backends create and upgrade their schema, one version at a time.

Each backend lists, version by version, the statements that take its schema one version up
(SQLite's ``service.storage``, PostgreSQL's ``service.postgres``), and records the version it
reached in the same transaction (SQLite's ``user_version``, a PostgreSQL table).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence


def migrate(
    where: str, found: int, migrations: Sequence[str], execute: Callable[[str], object]
) -> None:
    """Bring the database ``where`` from schema version ``found`` to ``len(migrations)``,
    running each step's script with ``execute``; the caller records the version reached, in
    the same transaction.

    Raises ``RuntimeError`` for a database newer than this steadyscale: its tables may mean
    something this code does not know, so it is better not to touch it.
    """
    if found > len(migrations):
        raise RuntimeError(
            f"{where} has schema version {found}; this steadyscale reads versions up to "
            f"{len(migrations)}"
        )
    for script in migrations[found:]:
        execute(script)
