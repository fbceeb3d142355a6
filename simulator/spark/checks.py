"""What must hold before a Spark job starts, checked without starting one.

A Spark command that starts a JVM on a bad master URL, without Java or without PySpark fails
after a minute with pages of Java stack trace. These checks take a second, import nothing of
PySpark, and raise one-line errors that say what to do: ``SparkUnavailable`` when this machine
cannot run Spark, ``ValueError`` for a master URL that is not one.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import socket
import subprocess

VERBOSE_ENV = "STEADYSCALE_SPARK_VERBOSE"
"""Set to 1 (``--verbose`` does) for Spark's own log at WARN and its console progress bars."""


class SparkUnavailable(RuntimeError):
    """Spark cannot start here (no PySpark, no Java, one too old, no master); says how to fix it."""


def check_spark(master: str) -> None:
    """Everything below, in order: PySpark installed, ``master`` usable, Java 17 or newer."""
    if importlib.util.find_spec("pyspark") is None:
        raise SparkUnavailable(
            "PySpark is not installed: pip install 'steadyscale[spark]' (or make test)"
        )
    check_master(master)
    require_java()


_INSTALL_JAVA = (
    "PySpark 4 needs Java 17 or newer. Install OpenJDK 17 "
    "(e.g. `apt install openjdk-17-jre-headless`) or set JAVA_HOME to a Java 17+ installation."
)


def require_java(minimum: int = 17) -> int:
    """The major version of the Java that Spark will start, if it is at least ``minimum``.

    Looks where Spark's launcher looks: ``$JAVA_HOME/bin/java`` when ``JAVA_HOME`` is set, else
    ``java`` on ``PATH``. Raises ``SparkUnavailable`` when there is none, when it does not run,
    or when it is older than ``minimum``.

    >>> require_java() >= 17
    True
    """
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        java = os.path.join(java_home, "bin", "java")
        if not os.access(java, os.X_OK):
            raise SparkUnavailable(
                f"JAVA_HOME={java_home}, but {java} is not an executable file. " + _INSTALL_JAVA
            )
    else:
        found = shutil.which("java")
        if found is None:
            path = os.environ.get("PATH", "")
            raise SparkUnavailable(
                f"java was not found: JAVA_HOME is not set and no java is on PATH={path!r}. "
                + _INSTALL_JAVA
            )
        java = found
    try:
        completed = subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise SparkUnavailable(
            f"`{java} -version` did not run ({error}). " + _INSTALL_JAVA
        ) from error
    output = completed.stderr + completed.stdout
    version = _java_major(output)
    if version is None:
        raise SparkUnavailable(
            f"`{java} -version` printed no version ({output.strip()!r}). " + _INSTALL_JAVA
        )
    if version < minimum:
        raise SparkUnavailable(
            f"{java} is Java {version}, older than Java {minimum}. " + _INSTALL_JAVA
        )
    return version


def _java_major(output: str) -> int | None:
    """The major version in the output of ``java -version`` (``1.x`` is Java ``x``).

    >>> [_java_major(f'openjdk version "{v}"') for v in ("17.0.15", "1.8.0_392", "21", "22-ea")]
    [17, 8, 21, 22]
    """
    match = re.search(r'version "(\d+)(?:\.(\d+))?', output)
    if match is None:
        return None
    major = int(match.group(1))
    return int(match.group(2)) if major == 1 and match.group(2) else major


_LOCAL = re.compile(r"local(\[(\*|\d+)(,\s*\d+)?\])?")
_LOCAL_CLUSTER = re.compile(r"local-cluster\[\s*\d+\s*,\s*\d+\s*,\s*\d+\s*\]")
_SCHEMES = ("spark://", "k8s://", "yarn", "mesos://")


def check_master(master: str, timeout: float = 5.0) -> None:
    """Refuse, in one line and before a JVM starts, a master URL Spark could not use.

    ``local``, ``local[N]``, ``local[*]``, ``local[N,F]`` and ``local-cluster[N,cores,MB]``
    are checked for their form; a ``spark://host:port`` master (or a list of them) must accept
    a connection within ``timeout`` seconds, since Spark would otherwise retry for a minute and
    print a stack trace per attempt. ``k8s://`` and ``yarn`` are passed on unchecked: their
    checks need the cluster's own credentials.

    >>> check_master("local[2]"); check_master("local-cluster[2,1,1024]")
    >>> check_master("local[two]")
    Traceback (most recent call last):
    ...
    ValueError: --master 'local[two]' is not a Spark master URL: use local[*], local[N], ...
    """
    local = (
        ("local-cluster", _LOCAL_CLUSTER, "local-cluster needs [executors,cores,memoryMB], e.g. "
         "local-cluster[2,1,1024]"),
        ("local", _LOCAL, "use local[*], local[N], local-cluster[N,cores,MB], spark://host:port, "
         "k8s://..., yarn"),
    )  # fmt: skip
    for prefix, pattern, allowed in local:
        if master.startswith(prefix):
            if not pattern.fullmatch(master):
                raise ValueError(f"--master {master!r} is not a Spark master URL: {allowed}")
            return
    if not master.startswith(_SCHEMES):
        raise ValueError(
            f"--master {master!r} is not a Spark master URL: use local[*], local[N], "
            "local-cluster[N,cores,MB], spark://host:port, k8s://..., yarn"
        )
    if master.startswith("spark://"):
        for address in master.removeprefix("spark://").split(","):
            host, _, port = address.rpartition(":")
            if not host or not port.isdigit():
                raise ValueError(f"--master {master!r}: {address!r} is not host:port")
            try:
                socket.create_connection((host, int(port)), timeout=timeout).close()
            except OSError as error:
                raise SparkUnavailable(
                    f"no Spark master answers at {address} ({error}); start it "
                    "(sbin/start-master.sh) or run locally with --master 'local[*]'"
                ) from None


if __name__ == "__main__":
    # `python -m simulator.spark.checks`: the Java check the Makefile runs before the tests.
    try:
        print(f"Java {require_java()} found: Spark can start")  # noqa: T201
    except SparkUnavailable as problem:
        raise SystemExit(f"steadyscale: {problem}") from None
