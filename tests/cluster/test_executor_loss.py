"""An executor JVM killed (`kill -9`) while an index build runs: the build's lost tasks run
again on the other executor (and on the one the worker starts in place of the dead one),
queries during the build keep using the previous version and stay correct, and the log stays
linear. A test hook (`spark.internal.bloomindex.test.buildTaskDelayMs`) makes each build task sleep
before reading, so that the kill lands while tasks are running."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from bloomindex import BloomIndex
from cluster_helpers import EXECUTORS, executor_pids, wait_for_executors
from index_helpers import (assert_filters_hold_values, assert_same_with_pruning_off, index_rows, log_entries,
                           row_path)

FILES = 8
ROWS = 4000
DELAY_MS = 2500


@pytest.fixture()
def table(spark, root):
    from pyspark.sql import functions as F

    (spark.range(0, ROWS, 1, FILES)
     .select("id", F.concat(F.lit("u"), (F.col("id") % 997).cast("string")).alias("u"))
     .write.format("parquet").saveAsTable("loss"))
    yield "loss"
    spark.sql("DROP TABLE IF EXISTS loss")
    wait_for_executors(spark)  # the worker's replacement, for the next test


QUERIES = ["id IN (1, 2222, 3999)", "u = 'u5'", "u = 'nothing' OR id = 3000"]


def _check_queries(spark, expect_pruning: bool) -> None:
    for where in QUERIES:
        q = f"SELECT * FROM loss WHERE {where}"
        assert_same_with_pruning_off(spark, lambda: spark.sql(q))
        if expect_pruning and where != "u = 'u5'":
            assert len(spark.sql(q).inputFiles()) < FILES, q


def _build_stages(spark, group: str) -> list:
    tracker = spark.sparkContext.statusTracker()
    stages = []
    for job in tracker.getJobIdsForGroup(group):
        info = tracker.getJobInfo(job)
        for sid in (info.stageIds if info else []):
            st = tracker.getStageInfo(sid)
            if st:
                stages.append(st)
    return stages


def _kill_during(spark, statement: str, index: str, prune_meanwhile: bool = True) -> dict:
    """Runs `statement` in a thread and kills one executor while its data pass runs; returns
    what happened (error, the stages' task counts at the kill and at the end, queries
    answered meanwhile)."""
    from pyspark import InheritableThread

    group = f"bloomindex-{index}"
    # One task per file (small files are otherwise packed two or more to a task), the data
    # pass the only job with FILES tasks (no footer check), each task slow.
    confs = {"spark.sql.files.openCostInBytes": str(128 << 20),
             "spark.bloomindex.build.footerFilters": "false",
             "spark.internal.bloomindex.test.buildTaskDelayMs": str(DELAY_MS)}
    for k, v in confs.items():
        spark.conf.set(k, v)
    result: dict = {}

    def run():
        try:
            spark.sql(statement).collect()
        except Exception as e:  # reported to the test thread
            result["error"] = e

    t = InheritableThread(target=run, daemon=True)
    t0 = time.monotonic()
    t.start()
    deadline = time.monotonic() + 180
    while True:  # the data pass: a stage whose tasks are running and not all done
        running = [s for s in _build_stages(spark, group) if s.numActiveTasks > 0 and s.numTasks >= FILES]
        if running or not t.is_alive():
            break
        assert time.monotonic() < deadline, "the build's data pass never started"
        time.sleep(0.1)
    assert t.is_alive(), "the build finished before the kill"
    time.sleep(0.5)  # inside the tasks' DELAY_MS sleep
    [stage] = running
    result["at_kill"] = (stage.numCompletedTasks, stage.numActiveTasks, stage.numTasks)
    pids = executor_pids(spark)
    assert len(pids) == EXECUTORS
    os.kill(pids[0], signal.SIGKILL)
    result["killed"] = pids[0]
    result["seconds_to_kill"] = round(time.monotonic() - t0, 1)
    # Queries while the build runs: the previous version, correct answers.
    explain = BloomIndex(spark).explain(spark.sql("SELECT * FROM loss WHERE id = 17"))
    if t.is_alive():  # not committed yet when the query was planned
        result["explain_while_building"] = explain
    _check_queries(spark, expect_pruning=prune_meanwhile)
    t.join(240)
    assert not t.is_alive(), "the build did not end"
    result["seconds_to_end"] = round(time.monotonic() - t0, 1)  # at most, the queries above ran meanwhile
    stages = _build_stages(spark, group)
    result["failed_tasks"] = sum(s.numFailedTasks for s in stages)
    result["stages_at_end"] = [(s.stageId, s.currentAttemptId, s.numTasks, s.numCompletedTasks, s.numFailedTasks)
                               for s in stages]
    result["stage_at_end"] = next((s.numCompletedTasks, s.numFailedTasks) for s in stages if s.stageId == stage.stageId)
    for k in confs:
        spark.conf.unset(k)
    return result


def _assert_linear(root: str, name: str) -> list[str]:
    entries = log_entries(root, name)
    assert [e["version"] for e in entries] == list(range(len(entries)))
    files = sorted(os.listdir(os.path.join(root, name, "_log")))
    assert files == [f"{v:020d}.json" for v in range(len(entries))]
    return [e["state"] for e in entries]


def _assert_index_complete(spark, root: str, name: str) -> None:
    """One row per (file, column) in the active data (a killed attempt's rows left out, none
    twice), and each file's filters hold every value of that file."""
    keys = [(row_path(r.file_path), r.column) for r in index_rows(spark, root, name)]
    assert len(keys) == len(set(keys)) == FILES * 2
    checked = assert_filters_hold_values(spark, root, name, spark.table("loss"), {"id": "bigint", "u": "string"})
    assert checked == 2 * ROWS


@pytest.mark.slow
def test_executor_killed_during_refresh(spark, root, table):
    spark.sql("CREATE BLOOM INDEX loss_idx ON loss FOR COLUMNS (id, u)")
    previous = log_entries(root, "loss_idx")[-1]["version"]
    # Load the index now, as a query running before the REFRESH would: loading it is a Spark
    # job, which during the build would queue behind the build's slow tasks.
    assert f"index loss_idx (log version {previous})" in \
        BloomIndex(spark).explain(spark.sql("SELECT * FROM loss WHERE id = 17"))
    r = _kill_during(spark, "REFRESH BLOOM INDEX loss_idx FULL", "loss_idx")
    print("RESULT", r)
    done, active, total = r["at_kill"]
    assert done < total and active >= 1  # the kill landed mid-job
    assert r["failed_tasks"] >= 1  # tasks were lost with the executor
    states = _assert_linear(root, "loss_idx")
    if "error" in r:  # failed cleanly: rolled back to the previous data
        assert "loss_idx" in str(r["error"])
        assert states == ["CREATING", "ACTIVE", "REFRESHING", "ACTIVE"]
    else:  # retried and succeeded
        assert states == ["CREATING", "ACTIVE", "REFRESHING", "ACTIVE"]
        assert r["stage_at_end"][0] >= total
    assert "explain_while_building" in r, f"the build ended before a query could be planned: {r}"
    assert f"index loss_idx (log version {previous})" in r["explain_while_building"], r
    entries = log_entries(root, "loss_idx")
    assert entries[-1]["data"]["dir"] != entries[1]["data"]["dir"] or "error" in r
    assert BloomIndex(spark).describe("loss_idx")["files_indexed"] == str(FILES)
    _assert_index_complete(spark, root, "loss_idx")
    assert r["killed"] not in executor_pids(spark)
    _check_queries(spark, expect_pruning=True)


@pytest.mark.slow
def test_executor_killed_during_create_with_global_filters(spark, root, table):
    """CREATE with global filters: the data pass's output is cached on the executors and read
    again for the global filters, so the kill also loses cached blocks."""
    r = _kill_during(spark, "CREATE BLOOM INDEX loss_g ON loss FOR COLUMNS (id, u) OPTIONS (global = true)",
                     "loss_g", prune_meanwhile=False)
    print("RESULT", r)
    done, active, total = r["at_kill"]
    assert done < total and active >= 1 and r["failed_tasks"] >= 1
    assert r["killed"] not in executor_pids(spark)
    states = _assert_linear(root, "loss_g")
    if "error" in r:
        assert "loss_g" in str(r["error"]) and states == ["CREATING", "DELETED"]
        _check_queries(spark, expect_pruning=False)
    else:
        assert states == ["CREATING", "ACTIVE"]
        assert BloomIndex(spark).describe("loss_g")["files_indexed"] == str(FILES)
        _assert_index_complete(spark, root, "loss_g")
        _check_queries(spark, expect_pruning=True)
        # The global filter holds every key: a join on it loses no row.
        q = "SELECT a.id FROM loss a JOIN loss b ON a.id = b.id WHERE b.u = 'u5'"
        on = sorted(spark.sql(q).collect())
        spark.conf.set("spark.bloomindex.joinFilter.enabled", "false")
        try:
            assert on == sorted(spark.sql(q).collect()) and len(on) == ROWS // 997 + 1
        finally:
            spark.conf.unset("spark.bloomindex.joinFilter.enabled")


def test_a_write_task_run_again_from_the_cache_leaves_no_file_unindexed(spark, root, table, tmp_path):
    """A global index (the first read's output cached for the second pass) whose files are over the
    distinct limit (each reported to the driver for a second read): the first index file write
    task to end fails once (the test hook), after the first read's output was cached. Spark runs
    it again, from the cached output; every (file, column) still gets its row, and its filter
    holds every value of its file."""
    marker = tmp_path / "failed-once"
    confs = {"spark.sql.files.openCostInBytes": str(128 << 20),  # a task per file
             "spark.bloomindex.build.footerFilters": "false",
             "spark.bloomindex.build.maxDistinctPerFile": "50",  # each file holds 500 ids and ~500 u
             # The rows written as the read's tasks give them (no cache of the rows to size probe
             # files, whose job would compute the read's output before the write).
             "spark.bloomindex.refresh.maxProbeFiles": "64",
             "spark.internal.bloomindex.test.failIndexWriteOnce": str(marker)}
    try:
        for k, v in confs.items():
            spark.conf.set(k, v)
        spark.sql("CREATE BLOOM INDEX loss_once ON loss FOR COLUMNS (id, u) OPTIONS (global = true)")
    finally:
        for k in confs:
            spark.conf.unset(k)
    assert marker.exists(), "the write task did not fail"
    _assert_index_complete(spark, root, "loss_once")
    d = dict(tuple(r) for r in spark.sql("DESCRIBE BLOOM INDEX loss_once").collect())
    assert d["files_indexed"] == str(FILES) and d["damage"] == "none", d
    _check_queries(spark, expect_pruning=True)
