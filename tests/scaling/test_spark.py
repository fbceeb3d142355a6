"""What the adaptor refuses, and why; resizing itself runs in test_spark_autoscale.py."""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.sql import SparkSession

from scaling.spark import SparkExecutorAdaptor, UnsupportedCluster, check_resizable


@pytest.mark.parametrize(
    "master",
    ["spark://head:7077", "local-cluster[2,1,1024]", "k8s://https://api:443", "yarn"],
)
def test_cluster_managers_with_executors_are_accepted(master: str) -> None:
    check_resizable(master, {"spark.dynamicAllocation.enabled": "false"})


@pytest.mark.parametrize("master", ["local", "local[2]", "local[*]", "local[4,3]"])
def test_local_mode_is_refused_with_what_to_use_instead(master: str) -> None:
    with pytest.raises(UnsupportedCluster, match=r"local mode .* local-cluster\["):
        check_resizable(master, {})


@pytest.mark.parametrize(
    "key", ["spark.dynamicAllocation.enabled", "spark.streaming.dynamicAllocation.enabled"]
)
def test_dynamic_allocation_is_refused_naming_the_setting(key: str) -> None:
    with pytest.raises(UnsupportedCluster, match=f"{key}=True .* Set {key}=false"):
        check_resizable("spark://head:7077", {key: "True"})


def test_a_local_session_is_refused(spark: SparkSession) -> None:
    with pytest.raises(UnsupportedCluster, match="master='local\\[2\\]'"):
        SparkExecutorAdaptor(spark)


def test_a_spark_connect_session_is_refused() -> None:
    class ConnectSession:  # what pyspark.sql.connect's session does on .sparkContext
        @property
        def sparkContext(self) -> Any:
            raise RuntimeError("[JVM_ATTRIBUTE_NOT_SUPPORTED]")

    with pytest.raises(UnsupportedCluster, match="Spark Connect"):
        SparkExecutorAdaptor(ConnectSession())  # type: ignore[arg-type]


def test_bad_bounds_are_refused_before_spark_is_touched() -> None:
    with pytest.raises(ValueError, match="max_executors"):
        SparkExecutorAdaptor(None, min_executors=3, max_executors=2)  # type: ignore[arg-type]
