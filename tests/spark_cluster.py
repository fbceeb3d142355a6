"""A real Spark cluster on this machine for tests: ``local-cluster[workers,cores,memoryMB]``.

One process has one SparkContext: the running session (the shared ``local[2]`` one of other
test modules) is stopped first, and the next module that wants it starts it again.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from pyspark.sql import SparkSession

from simulator.spark.session import spark_session


@contextmanager
def local_cluster(
    master: str, app_name: str, config: Mapping[str, str] | None = None
) -> Iterator[SparkSession]:
    running = SparkSession.getActiveSession()
    if running is not None:
        running.stop()
    session = spark_session(master, app_name=app_name, config=config)
    context = session.sparkContext
    # The workers keep each executor's logs under $SPARK_HOME/work/<application id>: there is
    # no setting for local-cluster workers, so remove them afterwards.
    logs = Path(context._jvm.System.getenv("SPARK_HOME")) / "work"
    application = context.applicationId
    try:
        yield session
    finally:
        session.stop()
        shutil.rmtree(logs / application, ignore_errors=True)
        if logs.is_dir() and not any(logs.iterdir()):
            logs.rmdir()


def wait_for(condition: Callable[[], bool], timeout: float, poll: float = 0.5) -> bool:
    """Poll ``condition`` until it holds (True) or ``timeout`` seconds pass (False)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(poll)
    return True
