"""A Spark session that starts quietly, on any master URL, after the checks that need no JVM.

Spark runs on the JVM: PySpark 4 needs Java 17 or newer (``require_java``, in
``simulator.spark.checks`` with the other checks made before a JVM starts). Python workers run
this interpreter, so that they import the same ``filters``, ``scaling``, ``simulator`` and
filterpy as the driver.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from pyspark.sql import SparkSession

from simulator.spark.checks import VERBOSE_ENV, check_spark

QUIET_LOG4J = Path(__file__).with_name("log4j2-quiet.properties")
"""Spark's log settings when not verbose: errors only, one line each."""

# The JVM announces the incubator module that Spark's launcher adds on every start; it says
# nothing a user can act on.
_JVM_NOISE = ("WARNING: Using incubator modules",)


def spark_session(
    master: str = "local[*]",
    app_name: str = "steadyscale",
    config: Mapping[str, str] | None = None,
    *,
    verbose: bool | None = None,
) -> SparkSession:
    """A Spark session on ``master`` (any master URL), the running one if there is one.

    Checks first, in a second and without starting a JVM, what would otherwise fail after
    Spark has started with a page of Java stack trace (``simulator.spark.checks.check_spark``).

    Python workers run this interpreter (``PYSPARK_PYTHON``, ``spark.pyspark.python``): the
    system Python would not import filterpy or this package. Quiet unless ``verbose`` (default:
    the ``STEADYSCALE_SPARK_VERBOSE`` environment variable, which ``--verbose`` sets): log at
    ERROR from the JVM's first line (``log4j2-quiet.properties``), no console progress bars, and
    the JVM's incubator-module notice dropped; verbose gives Spark's own WARN log and progress
    bars. No web UI, 8 shuffle partitions (aggregated grids are small). ``local`` and
    ``local-cluster`` masters bind to the loopback address: nothing leaves the machine.
    ``config`` adds or overrides settings. ``getOrCreate`` returns a running session as it
    is, whatever its master and settings: stop it first to change them.
    """
    check_spark(master)
    if verbose is None:
        verbose = os.environ.get(VERBOSE_ENV, "") not in ("", "0")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    settings = {
        "spark.pyspark.python": sys.executable,
        "spark.pyspark.driver.python": sys.executable,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "true" if verbose else "false",
        "spark.sql.shuffle.partitions": "8",
    }
    if master.startswith("local"):
        # Spark would otherwise warn that the hostname resolves to a loopback address.
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        settings |= {"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"}
    settings |= dict(config or {})
    if not verbose:
        quiet = f"-Dlog4j2.configurationFile={QUIET_LOG4J.as_uri()}"
        given = settings.get("spark.driver.extraJavaOptions", "")
        settings["spark.driver.extraJavaOptions"] = f"{given} {quiet}".strip()
        _launch_jvm_quietly(settings)
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, value)
    session: SparkSession = builder.getOrCreate()
    session.sparkContext.setLogLevel("WARN" if verbose else "ERROR")
    return session


@contextmanager
def local_cluster(
    master: str, app_name: str, config: Mapping[str, str] | None = None
) -> Iterator[SparkSession]:
    """A session on ``master`` (a cluster, e.g. ``local-cluster[workers,cores,memoryMB]``),
    stopped when the block ends, with the executor logs of a ``local-cluster`` removed.

    One process has one SparkContext: a running session (say, a shared ``local[2]`` one) is
    stopped first, and whoever wants it next starts it again.
    """
    running = SparkSession.getActiveSession()
    if running is not None:
        running.stop()
    session = spark_session(master, app_name=app_name, config=config)
    context = session.sparkContext
    jvm = context._jvm
    assert jvm is not None  # a classic session's driver always has one
    # The workers keep each executor's logs under $SPARK_HOME/work/<application id>: there is
    # no setting for local-cluster workers, so remove them afterwards.
    logs = Path(jvm.System.getenv("SPARK_HOME")) / "work"
    application = context.applicationId
    try:
        yield session
    finally:
        session.stop()
        shutil.rmtree(logs / application, ignore_errors=True)
        if logs.is_dir() and not any(logs.iterdir()):
            logs.rmdir()


def wait_for(condition: Callable[[], bool], timeout: float, poll: float = 0.5) -> bool:
    """Poll ``condition`` until it holds (True) or ``timeout`` seconds pass (False): what a
    cluster started or resized needs (executors register one by one)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(poll)
    return True


def _launch_jvm_quietly(settings: Mapping[str, str]) -> None:
    """Start PySpark's JVM with its stderr passed on line by line, minus ``_JVM_NOISE``.

    PySpark starts the JVM on the first session; starting it here first, through the
    ``popen_kwargs`` hook PySpark offers for capturing its output, is the only way to drop
    what the JVM prints before any log setting applies. A JVM already running is left alone.
    """
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None:
        return
    conf = SparkConf(loadDefaults=False).setAll(list(settings.items()))
    gateway = launch_gateway(conf, popen_kwargs={"stderr": subprocess.PIPE})  # type: ignore[no-untyped-call]
    stderr = gateway.proc.stderr
    threading.Thread(target=_pass_on, args=(stderr,), name="spark-stderr", daemon=True).start()
    SparkContext._ensure_initialized(gateway=gateway)


def _pass_on(stream: IO[bytes]) -> None:
    """Copy the JVM's stderr to ours, line by line, leaving out ``_JVM_NOISE``."""
    for line in iter(stream.readline, b""):
        if not line.decode(errors="replace").startswith(_JVM_NOISE):
            sys.stderr.write(line.decode(errors="replace"))
            sys.stderr.flush()
