"""Randomized: an index built over a folder of files answers, for any schema and table definition a
user reads the same files with, exactly as the scan without it, and still prunes where the
mapping of file columns to scan columns is the build's.

Formats: Parquet and JSON (columns by name), ORC (by name; files with Hive's `_col<n>` names by
position), CSV without a header and with one (by position, whatever the header says; with
`enforceSchema = false` the header is checked against the schema), and Delta (by physical name
under column mapping, with time travel to versions before renames), and Avro (by name; with
`positionalFieldMatching` by the column's place among the columns a query reads: such a scan is
never the build's mapping, so it must answer right and need not prune; the test session has Spark's
Avro source through `spark.jars.packages`). Iceberg has its own time-travel tests in tests/iceberg.

Per format, one folder of four files (values unique to each file) and one index with a global
filter on every column (`global = true`, so the join filter applies too); then random mappings of
the same files: user schemas reordered, cut to a subset, with columns renamed (by position the
renamed name reads another field) or INT widened to BIGINT, V1 and V2 file scans, catalog tables
created over the folder in another column order, and a table dropped and created again under
the same name with another definition. Each mapping runs random queries (`c = v`, `c IN (...)`,
a join against a small key table) with values present and absent; each query runs with the
index on and off (pruning and the join filter together) and must give the same rows.

A query whose mapping is the build's (Parquet by name in any order, CSV in the build's order,
headered CSV with its header checked) must skip files: counted per format, and asserted, so that
a fix that simply stops pruning fails here.

BLOOMINDEX_MAPPING_QUERIES (default 200; `make test-nightly` runs 5,000) sets the number of
queries, BLOOMINDEX_MAPPING_SEED the seed; every failure message names the seed and the case."""

from __future__ import annotations

import dataclasses
import os
import random

import pytest
from pyspark.sql import types as T

from bloomindex import BloomIndex
from index_helpers import confs
from test_decoding_regressions import _rows, kept, report, write_text_files

N_QUERIES = int(os.environ.get("BLOOMINDEX_MAPPING_QUERIES", "100"))
SEED = int(os.environ.get("BLOOMINDEX_MAPPING_SEED", "20261125"))
FORMATS = ["parquet", "orc", "orc_hive", "csv", "csv_header", "json", "avro", "delta"]
QUERIES_PER_FORMAT = -(-N_QUERIES // len(FORMATS))
QUERIES_PER_MAPPING = 6

FILES = 4
ROWS = 8
# The columns as built: name, Spark type, and each row's value.
BASE = [
    ("a", "STRING", lambda f, r: f"a{f}_{r}"),
    ("b", "INT", lambda f, r: f * 1000 + r),
    ("c", "BIGINT", lambda f, r: 5_000_000_000 + f * 1000 + r),
    ("s", "STRING", lambda f, r: f"s{f}_{r}"),
]
PRUNING = "spark.bloomindex.pruning.enabled"
JOIN_FILTER = "spark.bloomindex.joinFilter.enabled"
V1_LIST = "spark.sql.sources.useV1SourceList"


@dataclasses.dataclass
class Built:
    """One format's indexed folder: the file column names as the build read them."""
    fmt: str
    path: str
    index: str
    names: list[str]


@dataclasses.dataclass
class Mapping:
    """A way to read the built files: the scan's columns (name, type), how, and whether each
    scan column is the build's column of the same name (so an index must prune it)."""
    kind: str  # "path" or "table"
    columns: list[tuple[str, str]]
    v2: bool
    options: dict
    same: bool

    def ddl(self) -> str:
        return ", ".join(f"{n} {t}" for n, t in self.columns)


def _file_names(fmt: str) -> list[str]:
    if fmt == "orc_hive":
        return [f"_col{i}" for i in range(len(BASE))]
    if fmt == "csv":
        return [f"_c{i}" for i in range(len(BASE))]
    return [n for n, _, _ in BASE]


def _value(f: int, r: int, i: int):
    return BASE[i][2](f, r)


def _write(spark, fmt: str, path: str, names: list[str]) -> None:
    schema = T.StructType([T.StructField(n, {"STRING": T.StringType(), "INT": T.IntegerType(),
                                             "BIGINT": T.LongType()}[t]) for n, (_, t, _) in zip(names, BASE)])
    if fmt in ("csv", "csv_header"):
        header = [",".join(names)] if fmt == "csv_header" else []
        write_text_files(path, [header + [",".join(str(_value(f, r, i)) for i in range(len(BASE)))
                                          for r in range(ROWS)] for f in range(FILES)], "csv")
        return
    writer_fmt = "orc" if fmt == "orc_hive" else fmt
    for f in range(FILES):
        df = spark.createDataFrame([tuple(_value(f, r, i) for i in range(len(BASE))) for r in range(ROWS)], schema)
        df.coalesce(1).write.mode("append").format(writer_fmt).save(path)


@pytest.fixture(scope="module")
def built(spark, tmp_path_factory):
    """Writes and indexes each format's folder on first use."""
    made: dict[str, Built] = {}
    base = tmp_path_factory.mktemp("mapping")

    def get(fmt: str) -> Built:
        if fmt not in made:
            path = str(base / fmt)
            names = _file_names(fmt)
            _write(spark, fmt, path, names)
            index = f"map_{fmt}"
            reader = {"csv": "csv", "csv_header": "csv", "orc_hive": "orc"}.get(fmt, fmt)
            df = spark.read.format(reader)
            if fmt in ("csv", "csv_header", "json"):  # text formats: built under the columns' types
                df = df.schema(", ".join(f"{n} {t}" for n, (_, t, _) in zip(names, BASE)))
                if fmt == "csv_header":
                    df = df.option("header", "true")
            BloomIndex(spark).create(index, df.load(path), names, global_filter=True)
            made[fmt] = Built(fmt, path, index, names)
        return made[fmt]

    yield get
    for b in made.values():
        spark.sql(f"DROP BLOOM INDEX IF EXISTS {b.index}")


def _mapping(rng: random.Random, b: Built, first: bool = False) -> Mapping:
    """A random way to read `b`'s files (`first`: in the build's order and names)."""
    n = len(BASE)
    if b.fmt == "delta":
        # Delta reads by its own schema (no user schema): a projection in any order.
        cols = [(b.names[i], BASE[i][1]) for i in rng.sample(range(n), rng.randint(1, n))]
        return Mapping("path", cols, v2=False, options={}, same=True)
    order = list(range(n))
    same = True
    # A third of the mappings keep the build's order and names (a prefix of the columns at most).
    as_built = first or rng.random() < 0.35
    if not as_built and rng.random() < 0.8:
        rng.shuffle(order)
    keep = order if rng.random() < 0.6 else order[:rng.randint(1, n)]
    columns = []
    for pos, i in enumerate(keep):
        name, typ = b.names[i], BASE[i][1]
        if not as_built and rng.random() < 0.2:
            name = f"x{i}"  # a name the build does not have
        if typ == "INT" and rng.random() < 0.3:
            typ = "BIGINT"
        columns.append((name, typ))
    if b.fmt in ("csv", "csv_header", "orc", "orc_hive"):
        # By position (CSV; ORC, whose files may be read by position, records it too), a column
        # answers only where it is the build's column at the build's place.
        same = all(name == b.names[i] for i, (name, _) in zip(range(n), columns)) and keep == list(range(len(keep)))
    kind = "table" if rng.random() < 0.35 else "path"
    options = {}
    if b.fmt == "avro" and not as_built and rng.random() < 0.4:
        options["positionalFieldMatching"] = "true"  # by place among the columns read: not the build's
        same = False
    if b.fmt == "csv_header":
        options["header"] = "true"
        if rng.random() < 0.5:
            options["enforceSchema"] = "false"  # the header is checked, the mapping is still by position
    return Mapping(kind, columns, v2=rng.random() < 0.4, options=options, same=same)


def _reader_format(fmt: str) -> str:
    return {"csv_header": "csv", "orc_hive": "orc"}.get(fmt, fmt)


def _frame(spark, b: Built, m: Mapping, table: str):
    if b.fmt == "delta":
        return spark.read.format("delta").load(b.path).select(*[n for n, _ in m.columns])
    if m.kind == "path":
        return spark.read.format(_reader_format(b.fmt)).schema(m.ddl()).options(**m.options).load(b.path)
    return spark.table(table)


def _define_table(spark, b: Built, m: Mapping, table: str) -> None:
    """A catalog table over the folder with the mapping's columns; the name is reused, so each
    definition drops the table before (a table created again under the same name)."""
    spark.sql(f"DROP TABLE IF EXISTS {table}")
    opts = "".join(f" OPTIONS ({', '.join(f'{k} {v!r}' for k, v in m.options.items())})" if m.options else "")
    spark.sql(f"CREATE TABLE {table} ({m.ddl()}) USING {_reader_format(b.fmt)}{opts} LOCATION '{b.path}'")


def _values(rng: random.Random, typ: str, k: int) -> list:
    """`k` values for a column of `typ`: mostly held by some file (in any column), some absent."""
    out = []
    for _ in range(k):
        f, r = rng.randrange(FILES), rng.randrange(ROWS)
        if typ == "STRING":
            out.append(rng.choice([f"a{f}_{r}", f"s{f}_{r}", str(f * 1000 + r), "missing"]))
        else:
            out.append(rng.choice([f * 1000 + r, 5_000_000_000 + f * 1000 + r, 777_777]))
    if typ == "INT":
        out = [v if -2**31 <= v < 2**31 else 12 for v in out]
    return out


def _literal(v) -> str:
    return f"'{v}'" if isinstance(v, str) else str(v)


def _answers(spark, make, case: str, stats: dict) -> None:
    """The rows with the index on equal the rows with it off (pruning and the join filter)."""
    def run(on: bool):
        with confs(spark, {PRUNING: str(on).lower(), JOIN_FILTER: str(on).lower()}):
            try:
                return ("rows", _rows(make()))
            except Exception as e:  # an error must be the same error
                return ("error", type(e).__name__)
    on, off = run(True), run(False)
    # One tolerance: where the scan without the index fails reading a file (Spark cannot read
    # Hive-named ORC files through a schema with fewer columns than they hold), the index may
    # skip every file and answer no rows. It never returns a row the scan would not.
    skipped_a_failing_read = off[0] == "error" and on == ("rows", [])
    assert on == off or skipped_a_failing_read, f"seed {SEED}, {case}: index on {on}, off {off}"
    stats["queries"] += 1


def _run_format(spark, built, fmt: str) -> dict:
    b = built(fmt)
    rng = random.Random(f"{SEED}-{fmt}")
    stats = {"queries": 0, "pruned": 0, "same": 0}
    table = f"mapped_{fmt}"
    try:
        while stats["queries"] < QUERIES_PER_FORMAT:
            m = _mapping(rng, b, first=stats["queries"] == 0)
            if m.kind == "table":
                _define_table(spark, b, m, table)
            with confs(spark, {V1_LIST: "" if m.v2 else None}):
                for _ in range(QUERIES_PER_MAPPING):
                    col, typ = rng.choice(m.columns)
                    shape = rng.choice(["eq", "in", "join"])
                    vals = _values(rng, typ, 1 if shape == "eq" else rng.randint(2, 4))
                    case = f"{fmt} {m} {shape} {col} {vals}"
                    if shape == "join":
                        keys = spark.createDataFrame([(v,) for v in vals], f"key {typ}")

                        def make(keys=keys, col=col):
                            scan = _frame(spark, b, m, table)
                            return scan.join(keys, scan[col] == keys["key"])
                    else:
                        where = f"{col} = {_literal(vals[0])}" if shape == "eq" \
                            else f"{col} IN ({', '.join(map(_literal, vals))})"

                        def make(where=where):
                            return _frame(spark, b, m, table).where(where)
                    _answers(spark, make, case, stats)
                # Where the mapping is the build's, a lookup of a held value skips files.
                answering = [(n, t) for n, t in m.columns if n in b.names and t == BASE[b.names.index(n)][1]]
                if m.same and answering:
                    col, _ = rng.choice(answering)
                    v = _value(rng.randrange(FILES), rng.randrange(ROWS), b.names.index(col))
                    k = kept(report(spark, lambda: _frame(spark, b, m, table).where(f"{col} = {_literal(v)}")), b.index)
                    # The index answered and skipped files (of a Delta table, Delta's own data
                    # skipping may already have cut the scan to the one file holding the value).
                    pruned = k is not None and (k[0] < k[1] or k[0] == 1)
                    stats["same"] += 1
                    stats["pruned"] += int(pruned)
                    assert pruned, f"seed {SEED}, {fmt} {m}: {col} = {v} kept {k}"
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {table}")
    return stats


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "delta"])
def test_random_schemas_over_indexed_files(spark, root, built, fmt):
    stats = _run_format(spark, built, fmt)
    print(f"{fmt}: {stats}")
    assert stats["queries"] >= QUERIES_PER_FORMAT
    # Each format has mappings that are the build's (the first one at least): they pruned.
    assert stats["same"] > 0 and stats["pruned"] == stats["same"], f"seed {SEED}, {fmt}: {stats}"


@pytest.mark.delta
def test_random_reads_of_an_indexed_delta_table_and_its_older_versions(spark, root, built, tmp_path):
    """A Delta table read in random projections; then a table whose schema changed across
    versions (a column added by schema merging, then an overwrite in another column order with a
    column widened), indexed at its newest version and read at every version (`versionAsOf`)."""
    stats = _run_format(spark, built, "delta")
    assert stats["queries"] >= QUERIES_PER_FORMAT
    assert stats["same"] > 0 and stats["pruned"] == stats["same"], f"seed {SEED}, delta: {stats}"

    p = str(tmp_path / "evolving")
    _write(spark, "delta", p, [n for n, _, _ in BASE])  # versions 0 to 3
    spark.createDataFrame([("a9_0", 9000, 5_000_009_000, "s9_0", "d9")], "a STRING, b INT, c BIGINT, s STRING, d STRING") \
        .write.format("delta").mode("append").option("mergeSchema", "true").save(p)  # version 4
    spark.createDataFrame([(f"s{f}_{r}", f"a{f}_{r}", f * 1000 + r, 5_000_000_000 + f * 1000 + r, None)
                           for f in range(FILES, FILES + 2) for r in range(ROWS)],
                          "s STRING, a STRING, b BIGINT, c BIGINT, d STRING") \
        .repartition(2).write.format("delta").mode("overwrite").option("overwriteSchema", "true").save(p)  # version 5
    spark.sql(f"CREATE BLOOM INDEX map_delta_versions ON delta.`{p}` FOR COLUMNS (a, b, s) OPTIONS (global = true)")
    rng = random.Random(f"{SEED}-delta-versions")
    counter = {"queries": 0}
    try:
        while counter["queries"] < max(24, QUERIES_PER_FORMAT // 4):
            version = rng.choice([0, 3, 4, 5, None])
            col = rng.choice(["a", "b", "c", "s"])
            vals = _values(rng, "STRING" if col in ("a", "s") else "BIGINT", rng.randint(1, 3))
            if col == "b":
                vals = [v if -2**31 <= v < 2**31 else 12 for v in vals]

            def make(version=version, col=col, vals=vals):
                r = spark.read.format("delta")
                if version is not None:
                    r = r.option("versionAsOf", version)
                return r.load(p).where(f"{col} IN ({', '.join(map(_literal, vals))})")
            _answers(spark, make, f"delta version {version} {col} {vals}", counter)
    finally:
        spark.sql("DROP BLOOM INDEX IF EXISTS map_delta_versions")
