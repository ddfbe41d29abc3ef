"""Issue 29, "Concurrency": two sessions in two processes append to one Parquet folder at the
same time, and each append refreshes the folder's `on_write` index before it returns.

The folder has a few seed files and `CREATE BLOOM INDEX ... OPTIONS (refresh = 'on_write')` on
its string column, made by this process's session. Two writer processes (writer.py, a local[1]
session each, the same index root) wait for one start signal, then each appends ROUNDS one-file
writes of values unique to the writer and round. While they run, this process looks up values
already written, with the index on and off: every answer must be the rows written. Once both
writers exited 0 and the log is settled, with no REFRESH run here and no refresh queued by this
process's queries (`spark.bloomindex.refresh.staleShare` = 1.0 in its session):

1. the index's newest entry is ACTIVE and holds exactly the folder's files, all of them. This
   holds even when a writer's last refresh gives up after its three attempts: what beat it was
   a commit of the other writer's refresh, whose begin came after it and so listed the folder
   after the write, and which nothing but a later refresh can beat;
2. the log's versions are consecutive from 0, every entry readable and naming its own version,
   every ACTIVE one closing an operation that began earlier in the log (no entry lost);
3. what the race did is printed, not asserted (it cannot be forced): per writer the retries
   after a lost race (WriteEvents logs them at INFO) and the rounds after which DESCRIBE showed
   `automatic_refresh_failed`, and from the log the refreshes begun and never finished; each
   such failure must be a lost race (BLOOM_INDEX_CONCURRENT_UPDATE), never another error;
4. a lookup of each writer's last value answers its row and the index keeps exactly the one
   file holding it.

`BLOOMINDEX_RACE_ROUNDS` sets ROUNDS (default 6)."""

from __future__ import annotations

import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import time

from index_helpers import index_rows, log_entries, row_path
from test_decoding_regressions import kept, report, same

WRITER = pathlib.Path(__file__).with_name("writer.py")
WRITERS = 2
ROUNDS = int(os.environ.get("BLOOMINDEX_RACE_ROUNDS", "6"))
ROWS = 20
SEEDS = 3
INDEX = "race"
# Generous: two extra JVMs on a shared 2-core machine.
READY_TIMEOUT_S = 600
WRITERS_TIMEOUT_S = 1800
SETTLE_TIMEOUT_S = 180
SETTLED_FOR_S = 3.0
LOG_FILE = re.compile(r"^(\d{20})\.json$")


def _summary(root: str) -> list:
    return [(e["version"], e["state"], e["operation"]) for e in log_entries(root, INDEX)]


def _log_files(root: str) -> list[str]:
    """The committed entries' file names (not the hidden files an entry is written to first)."""
    return sorted(n for n in os.listdir(os.path.join(root, INDEX, "_log")) if not n.startswith((".", "_")))


def _progress(control: pathlib.Path) -> list[dict]:
    """The rounds the writers finished so far (their appends returned, refreshes included)."""
    done = []
    for w in range(WRITERS):
        path = control / f"progress-{w}.jsonl"
        if path.exists():
            for line in path.read_text().splitlines():
                try:
                    done.append(json.loads(line))
                except ValueError:  # a line being written
                    pass
    return done


def _tail(path: pathlib.Path, lines: int = 40) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else "(none)"


def _kill(proc: subprocess.Popen) -> None:
    """Ends a writer this test started and what it started (its JVM): its own process group."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=60)


def _lookup(spark, path: str, values: dict[str, int], what: str) -> list:
    """`k IN values` with the index on and off: both the written rows, nothing else."""
    keys = ", ".join(f"'{k}'" for k in sorted(values))
    rows = same(spark, lambda: spark.read.parquet(path).where(f"k IN ({keys})"), what)
    assert rows == sorted(values.items()), f"{what}: rows {rows}, expected {sorted(values.items())}"
    return rows


def _await_settled(root: str) -> None:
    """Until no log version has been added for SETTLED_FOR_S and the newest entry is stable."""
    deadline = time.time() + SETTLE_TIMEOUT_S
    seen, since = None, time.time()
    while True:
        files = _log_files(root)
        if files != seen:
            seen, since = files, time.time()
        elif time.time() - since >= SETTLED_FOR_S and log_entries(root, INDEX)[-1]["state"] in ("ACTIVE", "DELETED"):
            return
        assert time.time() < deadline, f"the log did not settle in {SETTLE_TIMEOUT_S} s: {_summary(root)}"
        time.sleep(0.2)


def _retries(stderr: pathlib.Path) -> dict:
    """What a writer's JVM logged about its automatic refreshes."""
    text = stderr.read_text(errors="replace") if stderr.exists() else ""
    return {"lost_race_retries": len(re.findall(r"automatic refresh of '[^']*' lost a race", text)),
            "refresh_failed_warnings": len(re.findall(r"the automatic refresh of Bloom index '[^']*' after a write failed", text))}


def test_two_processes_append_and_refresh_on_write_at_once(spark, root, tmp_path):
    data = str(tmp_path / "events")
    control = tmp_path / "control"
    control.mkdir()
    for s in range(SEEDS):
        spark.createDataFrame([(f"seed{s}-{i}", i) for i in range(ROWS)], "k STRING, v INT").coalesce(1) \
            .write.mode("append").parquet(data)
    spark.sql(f"CREATE BLOOM INDEX {INDEX} ON parquet.`{data}` FOR COLUMNS (k) "
              "OPTIONS (refresh = 'on_write', fpp = '0.00001')")
    seed_values = {f"seed{s}-3": 3 for s in range(SEEDS)}
    _lookup(spark, data, seed_values, "seeds")

    t0 = time.time()
    procs, outs, errs = [], [], []
    try:
        for w in range(WRITERS):
            outs.append(control / f"writer-{w}.out")
            errs.append(control / f"writer-{w}.err")
            procs.append(subprocess.Popen(
                [sys.executable, str(WRITER), str(w), str(ROUNDS), str(ROWS), data, root, INDEX, str(control)],
                stdout=open(outs[w], "w"), stderr=open(errs[w], "w"), start_new_session=True))

        def writers_report() -> str:
            return "\n".join(f"--- writer {w} (exit {p.poll()}) stderr:\n{_tail(errs[w])}" for w, p in enumerate(procs))

        deadline = time.time() + READY_TIMEOUT_S
        while not all((control / f"ready-{w}").exists() for w in range(WRITERS)):
            assert all(p.poll() is None for p in procs), f"a writer exited before the start\n{writers_report()}"
            assert time.time() < deadline, f"the writers were not ready in {READY_TIMEOUT_S} s\n{writers_report()}"
            time.sleep(0.1)
        ready = time.time() - t0
        (control / "start").touch()
        started = time.time()

        # While they write: lookups of what is written, the index on and off.
        lookups, pruned = 0, 0
        deadline = started + WRITERS_TIMEOUT_S
        while any(p.poll() is None for p in procs):
            assert time.time() < deadline, f"the writers did not finish in {WRITERS_TIMEOUT_S} s\n{writers_report()}"
            done = _progress(control)
            if not done:
                time.sleep(0.1)
                continue
            written = {d["value"]: d["v"] for d in done}
            newest = {d["writer"]: d for d in done}
            for w, d in sorted(newest.items()):
                what = f"during the race, writer {w}'s round {d['round']} ({d['value']}); log {_summary(root)}"
                _lookup(spark, data, {d["value"]: d["v"]}, what)
                lookups += 1
                k = kept(report(spark, lambda v=d["value"]: spark.read.parquet(data).where(f"k = '{v}'")), INDEX)
                pruned += k is not None and k[0] < k[1]
            _lookup(spark, data, {**written, **seed_values}, f"during the race, every value written so far; log {_summary(root)}")
            lookups += 1
        race = time.time() - started
    finally:
        for p in procs:
            _kill(p)

    for w, p in enumerate(procs):
        assert p.returncode == 0, f"writer {w} exited {p.returncode}; log {_summary(root)}\n{writers_report()}"
    summaries = {}
    for w in range(WRITERS):
        line = [ln for ln in outs[w].read_text().splitlines() if ln.startswith("RACE-SUMMARY ")]
        assert line, f"writer {w} printed no summary\n{_tail(outs[w])}\n{writers_report()}"
        summaries[w] = json.loads(line[-1][len("RACE-SUMMARY "):])
        assert summaries[w]["refresher_idle"], f"writer {w}'s background refresher was still busy at its end"
        assert [r["round"] for r in summaries[w]["rounds"]] == list(range(ROUNDS)), summaries[w]

    _await_settled(root)
    entries = log_entries(root, INDEX)
    summary = _summary(root)

    # 3. What the race did (not asserted: a conflict cannot be forced).
    ops = {}
    for e in entries:
        ops.setdefault(e["operationId"], []).append(e["state"])
    abandoned = [e["version"] for e in entries if e["state"] == "REFRESHING" and "ACTIVE" not in ops[e["operationId"]]]
    observed = {w: {**_retries(errs[w]),
                    "rounds_with_refresh_failed": [(r["round"], r["refresh_failed"]) for r in summaries[w]["rounds"]
                                                   if r["refresh_failed"]],
                    "append_seconds": [r["seconds"] for r in summaries[w]["rounds"]]} for w in range(WRITERS)}
    print(f"\nrace: {WRITERS} writers x {ROUNDS} appends in {race:.1f} s (the writers ready after {ready:.1f} s); "
          f"{lookups} lookups during it, {pruned} pruned by the index; {len(entries)} log versions, "
          f"{len(abandoned)} refreshes begun and never finished (versions {abandoned})")
    for w, o in observed.items():
        print(f"writer {w}: {json.dumps(o)}")
    print(f"log: {summary}")
    failures = {w: o["rounds_with_refresh_failed"] for w, o in observed.items() if o["rounds_with_refresh_failed"]}
    # A refresh that gave up did so after lost races only (a build whose folder the other
    # writer's cleanup removed is reported as a lost race too), never for another reason.
    other = {w: [f for f in fs if "BLOOM_INDEX_CONCURRENT_UPDATE" not in f[1]] for w, fs in failures.items()}
    assert not any(other.values()), f"automatic refreshes failed for other reasons than a lost race: {other}; log {summary}"

    # 2. No entry lost: versions 0..n-1, each readable and its own, each ACTIVE closing an operation begun before.
    files = _log_files(root)
    versions = [int(LOG_FILE.match(n).group(1)) if LOG_FILE.match(n) else n for n in files]
    assert versions == list(range(len(files))), f"log files are not versions 0..{len(files) - 1}: {files}"
    assert [e["version"] for e in entries] == versions, summary
    begun = set()
    for e in entries:
        if e["state"] == "ACTIVE":
            assert e["operationId"] in begun, f"version {e['version']} is ACTIVE for an operation never begun: {summary}"
        else:
            begun.add(e["operationId"])

    # 1. The newest entry, from the automatic refreshes alone, holds every file of the folder.
    folder = {row_path(f) for f in spark.read.parquet(data).inputFiles()}
    assert len(folder) == SEEDS + WRITERS * ROUNDS, sorted(folder)
    newest = entries[-1]
    why = (f"log {summary}; DESCRIBE after each writer's rounds said automatic_refresh_failed: {failures or 'never'}; "
           f"writers: {json.dumps(observed)}")
    assert newest["state"] == "ACTIVE", f"the newest log entry is not ACTIVE: {why}"
    indexed = {row_path(r.file_path) for r in index_rows(spark, root, INDEX)}
    assert indexed == folder, (f"the index holds {len(indexed)} files, the folder has {len(folder)}: "
                               f"not indexed {sorted(folder - indexed)}, gone {sorted(indexed - folder)}; {why}")
    assert newest["data"]["indexedFiles"] == len(folder), why

    # 4. Each writer's last value: its row, and the one file holding it kept, every other skipped.
    for w in range(WRITERS):
        last = summaries[w]["rounds"][-1]
        read = lambda v=last["value"]: spark.read.parquet(data).where(f"k = '{v}'")  # noqa: E731
        with_pruning_off = same(spark, lambda r=read: r().select("_metadata.file_path").distinct(), last["value"])
        assert len(with_pruning_off) == 1, with_pruning_off
        assert same(spark, read, last["value"]) == [(last["value"], last["v"])]
        assert kept(report(spark, read), INDEX) == (1, len(folder)), report(spark, read)
