"""Issue 7: hostile input. Fuzzed statements, names and paths that try to leave the index
root, symbolic links, and what is read from storage (no Java serialization, bounded JSON)."""

from __future__ import annotations

import os
import pathlib
import random
import re
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.errors import AnalysisException, IllegalArgumentException, ParseException

from bloomindex import BloomIndex

ROOT = pathlib.Path(__file__).resolve().parent.parent

VALID = [
    "CREATE BLOOM INDEX IF NOT EXISTS fz ON fz_t FOR COLUMNS (id OPTIONS (fpp = 0.01, ndv = 100), s) "
    "OPTIONS (global = true)",
    "CREATE BLOOM INDEX fz2 ON parquet.`/nonexistent/fz` FOR COLUMNS (id)",
    "REFRESH BLOOM INDEX fz FULL",
    "REFRESH BLOOM INDEX fz INCREMENTAL",
    "DROP BLOOM INDEX IF EXISTS fz3",
    "SHOW BLOOM INDEXES ON fz_t",
    "DESCRIBE BLOOM INDEX `fz`",
    "CREATE BLOOMFILTER INDEX ON TABLE fz_t FOR COLUMNS (s OPTIONS (fpp = 0.1, numItems = 5000000))",
    "DROP BLOOMFILTER INDEX ON TABLE fz_t FOR COLUMNS (s)",
]
JUNK = ["(", ")", "'", '"', "`", ",", "=", ";", ".", "--", "/*", "*/", "OPTIONS", "INDEX", "BLOOM", "ON",
        "FOR", "COLUMNS", "IF", "NOT", "EXISTS", "FULL", "9" * 60, "1e999999", "-0.0", "NaN", "\u0000",
        "\u202e", "\U0001F600", "é", "\\", "../x", "/abs", "file:/x", "SELECT", "(" * 300]


def _tokens(sql):
    return [t for t in re.split(r"(?<=[ (),=])|(?=[ (),=])", sql) if t]


def mutate(rng: random.Random, sql: str) -> str:
    """Deletes, inserts, swaps or cuts tokens; random unicode, huge numbers, deep nesting."""
    t = _tokens(sql)
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(t))
        op = rng.randrange(7)
        if op == 0:
            del t[i]
        elif op == 1:
            t[i:i] = [" ", rng.choice(JUNK), " "]
        elif op == 2:
            j = rng.randrange(len(t))
            t[i], t[j] = t[j], t[i]
        elif op == 3:
            t.insert(i, "".join(chr(rng.randrange(1, 0x2FFFF)) for _ in range(rng.randint(1, 5))
                                ).encode("utf-8", "replace").decode("utf-8", "replace"))
        elif op == 4:
            t[i:i] = ["(" * 400, ")" * rng.randint(0, 400)]
        elif op == 5:
            t[i] = "9" * rng.randint(1, 400)
        else:
            t[i] = t[i][: rng.randrange(len(t[i]) + 1)]
        if not t:
            t = ["DROP"]
    return "".join(t).replace("\ud800", "")


def _bounded(fn, seconds):
    """Runs fn on another thread; fails if it takes longer (a hang is a failure, not a stuck run)."""
    out = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - returned to the caller to classify
            out["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"took over {seconds} s"
    return out


@pytest.fixture(scope="module")
def parse(spark):
    """The session's parser (ours wrapping Spark's), and a check of what it threw."""
    jvm = spark.sparkContext._jvm
    parser = spark._jsparkSession.sessionState().sqlParser()
    allowed = [jvm.java.lang.Class.forName(c) for c in
               ("org.apache.spark.sql.catalyst.parser.ParseException", "org.apache.spark.sql.AnalysisException")]

    def run(sql):
        out = _bounded(lambda: parser.parsePlan(sql), 10)
        if "error" in out:
            e = out["error"]
            if isinstance(e, (AnalysisException, ParseException)):  # PySpark converted the JVM's
                return False
            java = getattr(e, "java_exception", None)
            assert java is not None and any(c.isInstance(java) for c in allowed), (sql, repr(e))
            return False
        return True
    return run


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(base=st.sampled_from(VALID), seed=st.integers(0, 2**32))
def test_mutated_statements_parse_or_raise_a_parse_error(parse, base, seed):
    parse(mutate(random.Random(seed), base))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=200))
def test_random_text_after_our_first_words(parse, text):
    for head in ("CREATE BLOOM INDEX ", "REFRESH BLOOM ", "DROP BLOOMFILTER INDEX ON ", "SHOW BLOOM ", "DESC BLOOM "):
        parse(head + text.replace("\ud800", ""))


def test_mutated_statements_run_end_to_end(spark, root):
    """Statements that parse also run: analysis errors, never other exception types."""
    spark.sql("DROP TABLE IF EXISTS fz_t")
    spark.range(20).selectExpr("id", "cast(id as string) s").coalesce(1).write.saveAsTable("fz_t")
    spark.sql("CREATE BLOOM INDEX fz ON fz_t FOR COLUMNS (id)")
    rng = random.Random(7)
    ran = refused = 0
    for _ in range(60):
        sql = mutate(rng, rng.choice(VALID))
        if not spark.catalog.tableExists("fz_t"):
            spark.range(20).selectExpr("id", "cast(id as string) s").coalesce(1).write.saveAsTable("fz_t")
        out = _bounded(lambda: spark.sql(sql).collect(), 120)
        if "error" in out:
            assert isinstance(out["error"], (AnalysisException, ParseException)), (sql, repr(out["error"]))
            refused += 1
        else:
            ran += 1
    assert refused > 30, (ran, refused)


BAD_NAMES = ["../x", "..", ".", "a/b", "a\\b", "/abs", "file:/tmp/x", "hdfs://nn/x", "a.b", "", " ", "a b",
             "x" * 129, "\u00e9", "a\u0000b", "-lead", "~", "$HOME"]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_names_that_are_not_plain_identifiers_are_refused_everywhere(spark, root, tmp_path, name):
    path = str(tmp_path / "src")
    spark.range(5).write.parquet(path)
    q = "`" + name.replace("`", "``") + "`"
    statements = [f"CREATE BLOOM INDEX {q} ON parquet.`{path}` FOR COLUMNS (id)", f"REFRESH BLOOM INDEX {q}",
                  f"DROP BLOOM INDEX {q}", f"DESCRIBE BLOOM INDEX {q}"]
    for sql in statements:
        with pytest.raises((AnalysisException, ParseException), match="Invalid Bloom index name|Syntax error"):
            spark.sql(sql)
    bi = BloomIndex(spark, progress=False)
    for call in (lambda: bi.create(name, path, ["id"], source_format="parquet"), lambda: bi.refresh(name),
                 lambda: bi.drop(name), lambda: bi.describe(name)):
        with pytest.raises((AnalysisException, ValueError), match="Invalid Bloom index name|name"):
            call()
    assert not os.path.exists(root) or os.listdir(root) == []
    assert sorted(os.listdir(tmp_path)) == ["src"]


def test_index_folders_that_are_symbolic_links_are_refused(spark, root, tmp_path):
    path = str(tmp_path / "src")
    spark.range(5).write.parquet(path)
    outside = tmp_path / "outside"
    outside.mkdir()
    os.makedirs(root)
    os.symlink(outside, os.path.join(root, "evil"))
    with pytest.raises(AnalysisException, match="symbolic link"):
        spark.sql(f"CREATE BLOOM INDEX evil ON parquet.`{path}` FOR COLUMNS (id)")
    # A link one level down (the index's log folder) too.
    os.makedirs(os.path.join(root, "evil2"))
    os.symlink(outside, os.path.join(root, "evil2", "_log"))
    with pytest.raises(AnalysisException, match="symbolic link"):
        spark.sql(f"CREATE BLOOM INDEX evil2 ON parquet.`{path}` FOR COLUMNS (id)")
    assert list(outside.iterdir()) == []


def test_an_empty_root_is_refused(spark, tmp_path):
    path = str(tmp_path / "src")
    spark.range(5).write.parquet(path)
    spark.conf.set("spark.bloomindex.root", " ")
    try:
        with pytest.raises(AnalysisException, match="spark.bloomindex.root is empty"):
            spark.sql(f"CREATE BLOOM INDEX e ON parquet.`{path}` FOR COLUMNS (id)")
        # Queries do not fail over it.
        assert spark.read.parquet(path).where("id = 3").count() == 1
    finally:
        spark.conf.unset("spark.bloomindex.root")


def test_nothing_stored_is_read_with_java_or_python_serialization():
    """Index files are JSON (read with a schema) and Parquet; no object deserialization anywhere."""
    # Opening an object stream or reading objects from one; Spark's own shipping of task
    # closures (a Serializable class's private readObject hook) reads nothing stored.
    forbidden = re.compile(r"new\s+ObjectInputStream|\.readObject\s*\(|readUnshared|SerializationUtils|"
                           r"JavaSerializer|XMLDecoder|pickle\.loads?\(|marshal\.loads?\(|yaml\.load\(")
    sources = [p for p in (ROOT / "jvm" / "src" / "main").rglob("*") if p.suffix in (".scala", ".java")]
    sources += list((ROOT / "python" / "bloomindex").rglob("*.py"))
    assert len(sources) > 50
    hits = [f"{p}: {m.group(0)}" for p in sources for m in forbidden.finditer(p.read_text())]
    assert hits == []
