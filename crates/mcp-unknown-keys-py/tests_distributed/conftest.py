"""What the distributed tests share: the command line, a local Ray instance, a local Spark session.

Each engine is required: one that is missing fails the tests that need it,
with how to get it (`scripts/test-distributed` installs them all).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

HOW = "run scripts/test-distributed, which installs the pinned engines (and needs Java 17 for Spark)"


@pytest.fixture(scope="session")
def cli() -> str:
    path = os.environ.get("MCP_UK_CLI")
    if not path or not Path(path).is_file():
        pytest.fail(f"MCP_UK_CLI names no mcp-unknown-keys binary ({path!r}): {HOW}")
    return path


@pytest.fixture(scope="session")
def ray_local():
    try:
        import ray
    except ImportError as error:
        pytest.fail(f"Ray is not installed ({error}): {HOW}")
    ray.init(num_cpus=2, include_dashboard=False, configure_logging=False, log_to_driver=False)
    # Small corpora are still cut into several blocks, so that batches and merges are many.
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    yield ray
    ray.shutdown()


@pytest.fixture(scope="session")
def spark():
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.fail(f"Spark needs Java 17 and none is on PATH or in JAVA_HOME: apt-get install openjdk-17-jre-headless; {HOW}")
    try:
        from pyspark.sql import SparkSession
    except ImportError as error:
        pytest.fail(f"PySpark is not installed ({error}): {HOW}")
    # The workers run this interpreter, which has mcp_unknown_keys installed.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    session = (
        SparkSession.builder.master("local[2]")
        .appName("mcp-unknown-keys-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        # Several Arrow batches per partition, so that a partition merges its batches too.
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "64")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
