"""A real PostgreSQL server for the service's tests, started once per session.

The server is PostgreSQL's own binaries (Debian's ``postgresql`` package puts them under
``/usr/lib/postgresql/<version>/bin``; ``STEADYSCALE_PG_BIN`` names another directory), in a
temporary directory, on a free loopback port, with fsync off: a commit survives the server
being stopped at once, which tests do, not the machine crashing, which none does. ``initdb``
refuses to run as root, so as root the server runs as the ``postgres`` user (``runuser``).
Each test gets a schema of its own (``postgres_url``), so tests never see each other's streams.

Where no server can be started, the session header says why and every PostgreSQL test is
skipped with that reason (``-ra`` lists them): the SQLite half of the suite still runs, and
nobody mistakes it for the whole.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest

from tests.not_tested import not_tested
from tests.service.browser import browser  # noqa: F401 (the browser tests' fixture)
from tests.service.browser import report_header as browser_header
from tests.service.pull.test_real_prometheus import report_header as prometheus_header

# Fixtures that need the server: a test using one gets the ``postgres`` marker, so that
# ``pytest -m "not postgres"`` runs everything that needs none.
_POSTGRES_FIXTURES = {"postgres_server", "postgres_url", "lone_postgres"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _POSTGRES_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.postgres)


def postgres_binaries() -> tuple[Path | None, str]:
    """The directory holding initdb and pg_ctl, or ``None`` and why not."""
    given = os.environ.get("STEADYSCALE_PG_BIN")
    candidates = [given] if given else sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    on_path = shutil.which("initdb")
    if not given and on_path:
        candidates.append(str(Path(on_path).parent))
    for candidate in candidates:
        if (Path(candidate) / "initdb").exists() and (Path(candidate) / "pg_ctl").exists():
            return Path(candidate), ""
    where = given or "/usr/lib/postgresql/*/bin or PATH"
    return None, (
        f"no PostgreSQL server binaries (initdb, pg_ctl) in {where}: install Debian's "
        "postgresql package (apt-get install postgresql), or set STEADYSCALE_PG_BIN"
    )


def pytest_report_header() -> list[str]:
    found, why = postgres_binaries()
    if found is None:
        postgres = f"postgresql: NOT TESTED, {why}"
    else:
        postgres = f"postgresql: tests start a server from {found}"
    return [postgres, browser_header(), prometheus_header()]


class PostgresServer:
    """A PostgreSQL server in ``directory``, on 127.0.0.1:``port``, user ``steadyscale``."""

    def __init__(self, binaries: Path) -> None:
        self.binaries = binaries
        # tmp_path_factory's directories are root's alone: the server's user could not enter.
        self.directory = Path(tempfile.mkdtemp(prefix="steadyscale-pg-"))
        self._user = "postgres" if os.geteuid() == 0 else None
        if self._user is not None:
            shutil.chown(self.directory, self._user)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self._run("initdb", "-D", str(self.data), "-U", "steadyscale", "--auth=trust", "-E", "UTF8")
        self.url = f"postgresql://steadyscale@127.0.0.1:{self.port}/postgres"
        self.start()

    @property
    def data(self) -> Path:
        return self.directory / "data"

    def start(self) -> None:
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.directory} "
            "-c fsync=off -c full_page_writes=off "
            "-c max_connections=200"
        )
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.directory / "log"),
                  "-w", "start")  # fmt: skip

    def halt(self) -> None:
        """Stop the server at once (as a crash would), keeping its data for ``start``."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def _run(self, program: str, *args: str) -> None:
        command = [str(self.binaries / program), *args]
        if self._user is not None:
            command = ["runuser", "-u", self._user, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            log = self.directory / "log"
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise RuntimeError(f"{program} failed: {done.stderr or done.stdout}{tail}")

    def stop(self) -> None:
        """Stop the server and remove its directory."""
        try:
            self.halt()
        finally:
            shutil.rmtree(self.directory, ignore_errors=True)

    def fresh_url(self) -> str:
        """The URL of an empty schema of its own (PostgreSQL's ``search_path`` option)."""
        schema = f"test_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url, autocommit=True) as db:
            db.execute(f"CREATE SCHEMA {schema}")
        return f"{self.url}?options={quote(f'-csearch_path={schema}')}"


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """The session's PostgreSQL server; skips, saying why, where none can be started."""
    binaries, why = postgres_binaries()
    if binaries is None:
        not_tested("PostgreSQL", why)
    server = PostgresServer(binaries)
    yield server
    server.stop()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """An empty database of the test's own (a schema on the session's server)."""
    return postgres_server.fresh_url()


@pytest.fixture
def lone_postgres(postgres_server: PostgresServer) -> Iterator[PostgresServer]:
    """A server of the test's own, which it may stop (``halt``) and ``start`` again."""
    server = PostgresServer(postgres_server.binaries)
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest) -> str | None:
    """A test using this runs on each backend: ``None`` (the SQLite file under the data
    directory), then the URL of an empty PostgreSQL database of its own."""
    if request.param == "sqlite":
        return None
    url: str = request.getfixturevalue("postgres_url")
    return url
