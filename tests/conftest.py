from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from simulator.spark.session import spark_session

# Fixtures that start a JVM: a test using one gets the ``spark`` marker, so that
# ``pytest -m "not spark"`` (``make test-fast``) runs everything that needs no JVM.
_JVM_FIXTURES = {"spark", "cluster"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _JVM_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.spark)


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    """A local[2] session, shared: modules after the first get the running one back.

    Not stopped at the end of a module (starting Spark takes seconds); a module that needs
    another master stops it, and the next module using this fixture starts a new one.
    """
    yield spark_session("local[2]", app_name="steadyscale-tests")
