"""What auditing an Arrow column costs next to reading it, and what Ray and Spark give on 2 local workers.

Run it from the distributed venv (scripts/test-distributed installs it, pinned):

    target/test-distributed/venv/bin/python crates/mcp-unknown-keys-py/bench/bench_distributed.py [--quick]

Part 1, per core: rows per second of ``audit_arrow`` over a ``large_string``
column of JSON records, against ``pyarrow.json.read_json`` parsing the same
records (the column's bytes, a record a line) on one thread: what reading the
data already costs an engine. Interleaved rounds; each figure is the median
round, with the spread (lowest to highest) beside it.

Part 2, wall time on this machine: the same records written as Parquet and
audited by ``mcp_unknown_keys.ray.audit_dataset`` (``ray.init(num_cpus=2)``)
and ``mcp_unknown_keys.spark.audit_dataframe`` (``local[2]``), reading
included, against one process running ``audit_records`` over the column's
values already in memory as Python strings, and one process reading the
Parquet file (``pyarrow.parquet.read_table``) and running ``audit_arrow``.
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.json as pa_json
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests_distributed"))
from corpus import corpus, declarations  # noqa: E402

from mcp_unknown_keys import audit_records  # noqa: E402
from mcp_unknown_keys.arrow import audit_arrow  # noqa: E402


def spread(times: list[float], rows: int) -> str:
    rates = sorted(rows / t for t in times)
    return f"{statistics.median(rates):,.0f} rows/s ({rates[0]:,.0f}–{rates[-1]:,.0f})"


def per_core(shape: str, rows: int, rounds: int) -> dict:
    records = [line for line in corpus(shape, rows, 11) if line.startswith("{")]
    column = pa.array(records, pa.large_string())
    batch = pa.record_batch({"record": column})
    text = "\n".join(records).encode()
    tools = declarations()
    options = pa_json.ReadOptions(use_threads=False, block_size=1 << 24)
    audit_times, parse_times = [], []
    for _ in range(rounds):
        start = time.perf_counter()
        report = audit_arrow(batch, column="record", tools=tools)
        audit_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        table = pa_json.read_json(io.BytesIO(text), read_options=options)
        parse_times.append(time.perf_counter() - start)
    assert report.coverage.calls >= len(records) and table.num_rows == len(records)
    ratio = statistics.median(parse_times) / statistics.median(audit_times)
    return {
        "shape": shape,
        "rows": len(records),
        "bytes": len(text),
        "audit": spread(audit_times, len(records)),
        "parse": spread(parse_times, len(records)),
        "ratio": ratio,
    }


def engines(rows: int, rounds: int) -> list[str]:
    import ray
    from pyspark.sql import SparkSession

    from mcp_unknown_keys.ray import audit_dataset
    from mcp_unknown_keys.spark import audit_dataframe

    records = [line for line in corpus("exchanges", rows, 12) if line.startswith("{")]
    tmp = Path(tempfile.mkdtemp())
    parquet = tmp / "corpus.parquet"
    pq.write_table(pa.table({"record": pa.array(records, pa.large_string())}), parquet, row_group_size=20_000)
    expected = audit_records(records)

    os.environ["PYSPARK_PYTHON"] = sys.executable
    ray.init(num_cpus=2, include_dashboard=False, configure_logging=False, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    runs: dict[str, list[float]] = {
        "audit_records (1 process, records in memory)": [],
        "read_table + audit_arrow (1 process)": [],
        "Ray Data (2 CPUs)": [],
        "Spark (local[2])": [],
    }
    # One untimed run each: Ray's workers and Spark's Python workers start.
    audit_dataset(ray.data.read_parquet(str(parquet)), column="record")
    audit_dataframe(spark.read.parquet(str(parquet)), column="record")
    for _ in range(rounds):
        start = time.perf_counter()
        one = audit_records(records)
        runs["audit_records (1 process, records in memory)"].append(time.perf_counter() - start)
        start = time.perf_counter()
        in_place = audit_arrow(pq.read_table(str(parquet)), column="record")
        runs["read_table + audit_arrow (1 process)"].append(time.perf_counter() - start)
        start = time.perf_counter()
        on_ray = audit_dataset(ray.data.read_parquet(str(parquet), override_num_blocks=4), column="record")
        runs["Ray Data (2 CPUs)"].append(time.perf_counter() - start)
        start = time.perf_counter()
        on_spark = audit_dataframe(spark.read.parquet(str(parquet)).repartition(2), column="record")
        runs["Spark (local[2])"].append(time.perf_counter() - start)
        assert one == in_place == on_ray == on_spark == expected
    spark.stop()
    ray.shutdown()
    lines = [f"{len(records):,} exchange records ({parquet.stat().st_size / 1e6:.1f} MB of Parquet), {rounds} rounds:"]
    base = statistics.median(runs["audit_records (1 process, records in memory)"])
    for name, times in runs.items():
        median = statistics.median(times)
        lines.append(
            f"| {name} | {median:.2f} s | {min(times):.2f}–{max(times):.2f} s | {median / base:.1f}× |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer rows and rounds")
    args = parser.parse_args()
    rows, rounds = (20_000, 3) if args.quick else (100_000, 7)
    print(f"python {platform.python_version()}, pyarrow {pa.__version__}, {os.cpu_count()} cores")
    print("| shape | rows | MB | audit_arrow | pyarrow.json.read_json | read_json time / audit time |")
    print("|---|---|---|---|---|---|")
    for shape in ("transcript", "exchanges", "spans"):
        r = per_core(shape, rows, rounds)
        print(f"| {r['shape']} | {r['rows']:,} | {r['bytes'] / 1e6:.1f} | {r['audit']} | {r['parse']} | {r['ratio']:.1f}× |")
    print()
    for line in engines(rows * 2, max(3, rounds // 2)):
        print(line)


if __name__ == "__main__":
    main()
