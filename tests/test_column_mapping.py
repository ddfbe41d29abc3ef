"""Issue 30's reproductions: formats that map a file's columns to the scan's by position, catalog
tables dropped and created again over indexed files, and a listing older than the files.

Each query is run with pruning on and off and must answer the same; where the mapping is the
build's, the index must still prune; where it is not, `BloomIndex.explain` says why.
tests/test_schema_mapping.py is the randomized suite over the same ground."""

from __future__ import annotations

import glob
import os
import time

import pytest
from pyspark.errors import AnalysisException

from bloomindex import BloomIndex
from index_helpers import confs, entry_text
from test_decoding_regressions import (JOIN_FILTER, PRUNING, assert_not_applied, assert_prunes, kept, report, same,
                                       write_text_files)

V1_LIST = "spark.sql.sources.useV1SourceList"


def _csv_folder(path: str, files: int = 4, rows: int = 3) -> None:
    """`files` CSV files of lines `a<file>_<row>,b<file>_<row>`: every value is in one file only."""
    write_text_files(path, [[f"a{i}_{j},b{i}_{j}" for j in range(rows)] for i in range(files)], "csv")


def _drop(spark, *tables: str) -> None:
    for t in tables:
        spark.sql(f"DROP TABLE IF EXISTS {t}")


# ---------------------------------------------------------------------------------------------
# CSV: columns by position


def test_csv_read_with_reordered_schema_is_not_pruned(spark, root, tmp_path):
    p = str(tmp_path / "csv")
    _csv_folder(p)
    spark.sql(f"CREATE BLOOM INDEX csv_pos ON csv.`{p}` FOR COLUMNS (_c0)")

    def reordered():
        return spark.read.schema("_c1 STRING, _c0 STRING").csv(p).where("_c0 = 'b1_2'")

    # _c0 of the reordered schema is the second field of each line: b1_2 is there once.
    assert same(spark, reordered, "reordered CSV schema") == [("a1_2", "b1_2")]
    assert_not_applied(spark, reordered, "csv_pos", "position")

    def in_order():
        return spark.read.schema("_c0 STRING, _c1 STRING").csv(p).where("_c0 = 'a1_2'")

    assert same(spark, in_order, "CSV schema in the build's order") == [("a1_2", "b1_2")]
    assert_prunes(spark, in_order, "csv_pos")
    # A subset that keeps the column's position still prunes.
    assert same(spark, lambda: spark.read.schema("_c0 STRING").csv(p).where("_c0 = 'a2_1'")) == [("a2_1",)]
    assert_prunes(spark, lambda: spark.read.schema("_c0 STRING").csv(p).where("_c0 = 'a2_1'"), "csv_pos")


def test_csv_corrupt_record_column_takes_no_position(spark, root, tmp_path):
    p = str(tmp_path / "csv")
    _csv_folder(p)
    spark.sql(f"CREATE BLOOM INDEX csv_corrupt ON csv.`{p}` FOR COLUMNS (_c0)")

    # The corrupt-record column is no field of the line: _c0 is still the first field.
    def first():
        return spark.read.schema("_corrupt_record STRING, _c0 STRING").csv(p).where("_c0 = 'a3_0'")

    assert [r[1] for r in same(spark, first)] == ["a3_0"]
    assert_prunes(spark, first, "csv_corrupt")

    def second():
        return spark.read.schema("_c1 STRING, _corrupt_record STRING, _c0 STRING").csv(p).where("_c0 = 'b3_0'")

    assert [r[2] for r in same(spark, second)] == ["b3_0"]
    assert_not_applied(spark, second, "csv_corrupt", "position")


def test_csv_v2_scan_with_reordered_schema(spark, root, tmp_path):
    p = str(tmp_path / "csv")
    _csv_folder(p)
    spark.sql(f"CREATE BLOOM INDEX csv_v2 ON csv.`{p}` FOR COLUMNS (_c0)")
    with confs(spark, {V1_LIST: ""}):
        def reordered():
            return spark.read.schema("_c1 STRING, _c0 STRING").csv(p).where("_c0 = 'b2_2'")

        assert same(spark, reordered) == [("a2_2", "b2_2")]
        assert_not_applied(spark, reordered, "csv_v2", "position")

        def in_order():
            return spark.read.schema("_c0 STRING, _c1 STRING").csv(p).where("_c0 IN ('a2_2', 'zz')")

        assert same(spark, in_order) == [("a2_2", "b2_2")]
        assert_prunes(spark, in_order, "csv_v2")


def test_catalog_table_over_an_indexed_csv_folder(spark, root, tmp_path):
    p = str(tmp_path / "csv")
    _csv_folder(p)
    spark.sql(f"CREATE BLOOM INDEX csv_folder ON csv.`{p}` FOR COLUMNS (_c0)")
    try:
        spark.sql(f"CREATE TABLE csv_swapped (_c1 STRING, _c0 STRING) USING csv LOCATION '{p}'")
        q = "SELECT * FROM csv_swapped WHERE _c0 = 'b1_2'"
        assert same(spark, lambda: spark.sql(q)) == [("a1_2", "b1_2")]
        spark.sql(f"CREATE TABLE csv_same (_c0 STRING, _c1 STRING) USING csv LOCATION '{p}'")
        q2 = "SELECT * FROM csv_same WHERE _c0 = 'a1_2'"
        assert same(spark, lambda: spark.sql(q2)) == [("a1_2", "b1_2")]
        assert_prunes(spark, lambda: spark.sql(q2), "csv_folder")
    finally:
        _drop(spark, "csv_swapped", "csv_same")


def test_csv_with_a_checked_header_in_the_same_order_prunes(spark, root, tmp_path):
    p = str(tmp_path / "csv")
    write_text_files(p, [["a,b"] + [f"a{i}_{j},b{i}_{j}" for j in range(3)] for i in range(4)], "csv")
    BloomIndex(spark).create("csv_header", spark.read.option("header", "true").csv(p), ["a"])

    def checked():
        return spark.read.options(header="true", enforceSchema="false").schema("a STRING, b STRING").csv(p) \
            .where("a = 'a3_1'")

    assert same(spark, checked) == [("a3_1", "b3_1")]
    assert_prunes(spark, checked, "csv_header")

    # enforceSchema (the default) reads by position whatever the header says.
    def enforced():
        return spark.read.options(header="true").schema("b STRING, a STRING").csv(p).where("a = 'b3_1'")

    assert same(spark, enforced) == [("a3_1", "b3_1")]
    assert_not_applied(spark, enforced, "csv_header", "position")


def test_table_dropped_and_created_again_in_another_column_order(spark, root, tmp_path):
    p = str(tmp_path / "csv")
    _csv_folder(p)
    try:
        spark.sql(f"CREATE TABLE recreated (a STRING, b STRING) USING csv LOCATION '{p}'")
        spark.sql("CREATE BLOOM INDEX recreated_ix ON recreated FOR COLUMNS (a)")
        q = "SELECT a, b FROM recreated WHERE a = 'a2_0'"
        assert same(spark, lambda: spark.sql(q)) == [("a2_0", "b2_0")]
        assert_prunes(spark, lambda: spark.sql(q), "recreated_ix")
        with confs(spark, {"spark.bloomindex.dropWithTable": "false"}):  # as where the drop is not seen
            spark.sql("DROP TABLE recreated")
        spark.sql(f"CREATE TABLE recreated (b STRING, a STRING) USING csv LOCATION '{p}'")
        q2 = "SELECT a, b FROM recreated WHERE a = 'b2_0'"
        assert same(spark, lambda: spark.sql(q2)) == [("b2_0", "a2_0")]
        assert_not_applied(spark, lambda: spark.sql(q2), "recreated_ix", "created again")
        # A full refresh builds it for the table as it is now; then it prunes again.
        spark.sql("REFRESH BLOOM INDEX recreated_ix FULL")
        assert same(spark, lambda: spark.sql(q2)) == [("b2_0", "a2_0")]
        assert_prunes(spark, lambda: spark.sql(q2), "recreated_ix")
    finally:
        _drop(spark, "recreated")


def test_parquet_table_created_again_with_the_same_definition_is_another_table(spark, root, tmp_path):
    p = str(tmp_path / "pq")
    spark.range(0, 40, 1, 4).selectExpr("id AS k", "CAST(id AS STRING) AS s").write.parquet(p)
    try:
        spark.sql(f"CREATE TABLE pq_again USING parquet LOCATION '{p}'")
        spark.sql("CREATE BLOOM INDEX pq_again_ix ON pq_again FOR COLUMNS (k)")
        with confs(spark, {"spark.bloomindex.dropWithTable": "false"}):  # as where the drop is not seen
            spark.sql("DROP TABLE pq_again")
        time.sleep(0.01)
        spark.sql(f"CREATE TABLE pq_again USING parquet LOCATION '{p}'")
        q = "SELECT k FROM pq_again WHERE k = 17"
        assert same(spark, lambda: spark.sql(q)) == [(17,)]
        assert_not_applied(spark, lambda: spark.sql(q), "pq_again_ix", "created again")
        # An incremental refresh is refused (another table), a full one adopts it.
        with pytest.raises(Exception, match="created again"):
            spark.sql("REFRESH BLOOM INDEX pq_again_ix")
        spark.sql("REFRESH BLOOM INDEX pq_again_ix FULL")
        assert_prunes(spark, lambda: spark.sql(q), "pq_again_ix")
    finally:
        _drop(spark, "pq_again")


def test_join_filter_against_a_reordered_csv_scan(spark, root, tmp_path):
    p = str(tmp_path / "csv")
    _csv_folder(p)
    spark.sql(f"CREATE BLOOM INDEX csv_global ON csv.`{p}` FOR COLUMNS (_c0) OPTIONS (global = true)")
    spark.createDataFrame([("b1_2", 1), ("a1_2", 2), ("zz", 3)], "key STRING, n INT").createOrReplaceTempView("probe_keys")

    def joined():
        scan = spark.read.schema("_c1 STRING, _c0 STRING").csv(p)
        return spark.table("probe_keys").join(scan, scan["_c0"] == spark.table("probe_keys")["key"])

    assert same(spark, joined, "join against the reordered CSV scan") == [("b1_2", 1, "a1_2", "b1_2")]


# ---------------------------------------------------------------------------------------------
# ORC: Hive's column names are read by position


def test_orc_with_hive_style_names_read_with_reordered_schema(spark, root, tmp_path):
    p = str(tmp_path / "orc")
    spark.range(0, 40, 1, 4).selectExpr("id AS _col0", "id + 1000 AS _col1").write.orc(p)
    spark.sql(f"CREATE BLOOM INDEX orc_pos ON orc.`{p}` FOR COLUMNS (_col0)")

    def reordered():
        return spark.read.schema("_col1 BIGINT, _col0 BIGINT").orc(p).where("_col0 = 1017")

    assert same(spark, reordered) == [(17, 1017)]
    assert_not_applied(spark, reordered, "orc_pos", "position")

    def in_order():
        return spark.read.orc(p).where("_col0 = 17")

    assert same(spark, in_order) == [(17, 1017)]
    assert_prunes(spark, in_order, "orc_pos")


def test_orc_table_created_again_in_another_order(spark, root, tmp_path):
    p = str(tmp_path / "orc")
    spark.range(0, 40, 1, 4).selectExpr("id AS _col0", "id + 1000 AS _col1").write.orc(p)
    try:
        spark.sql(f"CREATE TABLE orc_t (a BIGINT, b BIGINT) USING orc LOCATION '{p}'")
        spark.sql("CREATE BLOOM INDEX orc_t_ix ON orc_t FOR COLUMNS (a)")
        assert same(spark, lambda: spark.sql("SELECT a, b FROM orc_t WHERE a = 17")) == [(17, 1017)]
        with confs(spark, {"spark.bloomindex.dropWithTable": "false"}):  # as where the drop is not seen
            spark.sql("DROP TABLE orc_t")
        spark.sql(f"CREATE TABLE orc_t (b BIGINT, a BIGINT) USING orc LOCATION '{p}'")
        q = "SELECT a, b FROM orc_t WHERE a = 1017"
        assert same(spark, lambda: spark.sql(q)) == [(1017, 17)]
        assert_not_applied(spark, lambda: spark.sql(q), "orc_t_ix")
    finally:
        _drop(spark, "orc_t")


# ---------------------------------------------------------------------------------------------
# a listing older than the files


def _write_parquet_file(spark, path: str, ks: list) -> None:
    """One uncompressed Parquet file at `path` of rows (k, s = k % 7): files of as many values of
    as many digits have the same byte size."""
    tmp = path + ".tmp"
    spark.createDataFrame([(k, str(k % 7)) for k in ks], "k BIGINT, s STRING").coalesce(1) \
        .write.option("compression", "none").parquet(tmp)
    os.replace(glob.glob(os.path.join(tmp, "*.parquet"))[0], path)
    for f in glob.glob(os.path.join(tmp, "*")) + glob.glob(os.path.join(tmp, ".*")):
        os.remove(f)
    os.rmdir(tmp)


def _parquet_folder(spark, p: str) -> list[str]:
    """Four files of k in [100, 140), ten values each."""
    os.makedirs(p)
    files = [os.path.join(p, f"part-{i}.parquet") for i in range(4)]
    for i, f in enumerate(files):
        _write_parquet_file(spark, f, list(range(100 + 10 * i, 110 + 10 * i)))
    return files


def _rewrite_same_size(spark, path: str, shift: int) -> None:
    """Rewrites file 0 (k in [100, 110)) with k moved by `shift`, keeping its byte size, and gives
    it a later modification time."""
    size = os.path.getsize(path)
    _write_parquet_file(spark, path, [k + shift for k in range(100, 110)])
    assert os.path.getsize(path) == size, "the rewrite must keep the byte size"
    st = os.stat(path)
    os.utime(path, (st.st_atime, st.st_mtime + 5))


def test_cached_listing_of_a_catalog_table_does_not_skip_a_rewritten_file(spark, root, tmp_path):
    p = str(tmp_path / "pq")
    files = _parquet_folder(spark, p)
    first = 100
    try:
        spark.sql(f"CREATE TABLE cached_t USING parquet LOCATION '{p}'")
        spark.sql("CREATE BLOOM INDEX cached_ix ON cached_t FOR COLUMNS (k)")
        q = "SELECT k FROM cached_t WHERE k = {v}"
        assert same(spark, lambda: spark.sql(q.format(v=first))) == [(first,)]  # the session caches the listing
        _rewrite_same_size(spark, files[0], 600)
        # Spark's reader reads the new bytes (the cached listing has the old modification time).
        assert same(spark, lambda: spark.sql(q.format(v=first + 600))) == [(first + 600,)]
        text = BloomIndex(spark).explain(spark.sql(q.format(v=first + 600)))
        assert "changed on storage" in text, text
        # Files that did not change are still skipped.
        other = 125
        assert same(spark, lambda: spark.sql(q.format(v=other))) == [(other,)]
        assert_prunes(spark, lambda: spark.sql(q.format(v=other)), "cached_ix")
    finally:
        _drop(spark, "cached_t")


def test_a_dataframe_reused_after_a_file_was_rewritten(spark, root, tmp_path):
    p = str(tmp_path / "pq")
    files = _parquet_folder(spark, p)
    first = 100
    spark.sql(f"CREATE BLOOM INDEX reused_ix ON parquet.`{p}` FOR COLUMNS (k)")
    df = spark.read.parquet(p)  # its file index lists once, now
    df.count()
    _rewrite_same_size(spark, files[0], 600)
    assert same(spark, lambda: df.where(f"k = {first + 600}").select("k")) == [(first + 600,)]


def test_join_filter_not_applied_over_a_cached_listing_of_a_rewritten_file(spark, root, tmp_path):
    p = str(tmp_path / "pq")
    files = _parquet_folder(spark, p)
    first = 100
    try:
        spark.sql(f"CREATE TABLE cached_j USING parquet LOCATION '{p}'")
        spark.sql("CREATE BLOOM INDEX cached_j_ix ON cached_j FOR COLUMNS (k) OPTIONS (global = true)")
        spark.createDataFrame([(first + 600, "x"), (first, "y")], "key BIGINT, tag STRING") \
            .createOrReplaceTempView("cached_keys")
        q = "SELECT c.k, o.tag FROM cached_keys o JOIN cached_j c ON c.k = o.key"
        assert same(spark, lambda: spark.sql(q)) == [(first, "y")]
        _rewrite_same_size(spark, files[0], 600)
        assert same(spark, lambda: spark.sql(q)) == [(first + 600, "x")]
    finally:
        _drop(spark, "cached_j")


def _partitioned_folder(spark, p: str) -> list[str]:
    """As _parquet_folder, in two partition folders (q=0, q=1) of two files each."""
    files = []
    for i in range(4):
        os.makedirs(os.path.join(p, f"q={i // 2}"), exist_ok=True)
        files.append(os.path.join(p, f"q={i // 2}", f"part-{i}.parquet"))
        _write_parquet_file(spark, files[-1], list(range(100 + 10 * i, 110 + 10 * i)))
    return files


@pytest.mark.parametrize("partitioned", [False, True])
def test_a_plan_run_after_refresh_table_reads_a_file_rewritten_after_it_was_planned(spark, root, tmp_path, partitioned):
    # The decision is made when the plan is optimized; the plan runs later, after the file was
    # rewritten in place and REFRESH TABLE gave its scan a new listing: the file is read.
    p = str(tmp_path / "pq")
    files = _partitioned_folder(spark, p) if partitioned else _parquet_folder(spark, p)
    t, v = "planned_t", 100 + 600
    try:
        part = (", q INT) USING parquet PARTITIONED BY (q)" if partitioned else ") USING parquet")
        spark.sql(f"CREATE TABLE {t} (k BIGINT, s STRING{part} LOCATION '{p}'")
        if partitioned:
            spark.sql(f"ALTER TABLE {t} RECOVER PARTITIONS")
        spark.sql(f"CREATE BLOOM INDEX planned_ix ON {t} FOR COLUMNS (k)")
        with confs(spark, {PRUNING: "true"}):
            df = spark.sql(f"SELECT k FROM {t} WHERE k = {v}")
            text = BloomIndex(spark).explain(df)  # plans df: no file holds v yet, all are skipped
            assert "planned_ix (log version 1) kept 0/4 files" in text, text
            _rewrite_same_size(spark, files[0], 600)
            spark.sql(f"REFRESH TABLE {t}")
            assert [r.k for r in df.collect()] == [v]
    finally:
        _drop(spark, t)


def _not_held(spark, index: str, keys) -> int:
    """A key of `keys` that the global filter of column k of `index` certainly does not hold
    (no false positive)."""
    return next(k for k in keys if not spark.sql(
        f"SELECT bloom_might_contain('{index}', 'k', CAST({k} AS BIGINT))").first()[0])


@pytest.mark.parametrize("reader", ["v1", "v1_rows", "v2"])
@pytest.mark.parametrize("run", ["explain_first", "cached"])
def test_a_plan_run_in_a_later_execution_reads_a_file_rewritten_in_place(spark, root, tmp_path, run, reader):
    # The skipped files are checked against storage when the plan is optimized; the plan runs
    # in a later execution (explained first, or cached and computed at its first action) after
    # file 0 was rewritten in place under the DataFrame's unchanged listing. Spark without the
    # index reads the new bytes through that listing, so the index must too. (A plan that
    # already ran: the test below.)
    p = str(tmp_path / "pq")
    files = _parquet_folder(spark, p)
    v = 100 + 600  # in file 0 once rewritten, in no file before
    settings = {PRUNING: "true"}
    if reader == "v1_rows":  # a scan of rows: its own code-generated stage below the index's marker
        settings["spark.sql.parquet.enableVectorizedReader"] = "false"
    if reader == "v2":
        settings["spark.sql.sources.useV1SourceList"] = ""
    BloomIndex(spark).create("later_run_ix", spark.read.parquet(p), ["k"])
    with confs(spark, settings):
        df = spark.read.parquet(p).where(f"k = {v}").select("k")
        if run == "explain_first":
            text = BloomIndex(spark).explain(df)  # plans df, runs nothing
            assert "later_run_ix (log version 1) kept 0/4 files" in text, text
        else:
            df.cache()
        try:
            _rewrite_same_size(spark, files[0], 600)
            assert [r.k for r in df.collect()] == [v]
            assert [r.k for r in df.collect()] == [v]
            # Without the index, the same plan shape reads the same row.
            with confs(spark, {PRUNING: "false"}):
                assert [r.k for r in spark.read.parquet(p).where(f"k = {v}").select("k").collect()] == [v]
        finally:
            df.unpersist()
        # A plan of the files as they are now still prunes what did not change.
        fresh = spark.read.parquet(p).where("k = 125").select("k")
        assert [r.k for r in fresh.collect()] == [125]
        assert [r.k for r in fresh.collect()] == [125]
        assert_prunes(spark, lambda: spark.read.parquet(p).where("k = 125").select("k"), "later_run_ix")


@pytest.mark.parametrize("reader", ["v1", "v1_rows", "v2"])
@pytest.mark.parametrize("lookup", ["absent", "in_list"])
def test_a_plan_that_already_ran_reads_a_file_rewritten_in_place_before_its_next_action(spark, root, tmp_path,
                                                                                      lookup, reader):
    # Spark builds a plan's RDD once and runs it again for every action on the same DataFrame,
    # with the files its first run chose. File 0 is rewritten in place (same size, the
    # DataFrame's listing unchanged) between two actions: Spark without the index reads its new
    # bytes through that listing at the second, so the index must too. "absent": the first run
    # skipped every file (a scan with no partition); "in_list": it read file 2.
    p = str(tmp_path / "pq")
    files = _parquet_folder(spark, p)
    v = 100 + 600  # in file 0 once rewritten, in no file before
    where, before = (f"k = {v}", []) if lookup == "absent" else (f"k IN (125, {v})", [125])
    settings = {PRUNING: "true"}
    if reader == "v1_rows":
        settings["spark.sql.parquet.enableVectorizedReader"] = "false"
    if reader == "v2":
        settings["spark.sql.sources.useV1SourceList"] = ""
    BloomIndex(spark).create("ran_ix", spark.read.parquet(p), ["k"])
    with confs(spark, settings):
        df = spark.read.parquet(p).where(where).select("k")
        assert sorted(r.k for r in df.collect()) == before
        _rewrite_same_size(spark, files[0], 600)
        assert sorted(r.k for r in df.collect()) == sorted(before + [v])
        assert sorted(r.k for r in df.collect()) == sorted(before + [v])
        # PySpark's iterator runs the plan's RDD with no check of its own: it reads what the
        # last action routed, the changed file too (docs/limitations.md).
        assert sorted(r.k for r in df.toLocalIterator()) == sorted(before + [v])
        with confs(spark, {PRUNING: "false"}):
            assert sorted(r.k for r in spark.read.parquet(p).where(where).select("k").collect()) == sorted(before + [v])
        # A new plan of the files as they are still prunes the files that did not change.
        assert_prunes(spark, lambda: spark.read.parquet(p).where("k = 125").select("k"), "ran_ix")


@pytest.mark.parametrize("reader", ["v1", "v1_rows", "v2", "v2_stages"])
@pytest.mark.parametrize("run", ["explain_first", "cache"])
def test_a_plan_first_run_under_other_decoding_settings_reads_what_it_skipped(spark, root, tmp_path, reader, run):
    # A V1 file scan builds its reader with the session's settings at its first run, not when
    # it is planned: a plan made while spark.sql.caseSensitive was true and first run after it
    # became false reads file b's column "ID" as id, which the index (built case-sensitively:
    # b's id all NULL) skipped. Spark without the index answers [1]; so must the index, at every
    # action. Every reader answers as without the index.
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = tmp_path / "cs"
    p.mkdir()
    pq.write_table(pa.table({"id": pa.array([2], pa.int32())}), str(p / "a.parquet"))
    pq.write_table(pa.table({"ID": pa.array([1], pa.int32())}), str(p / "b.parquet"))
    settings = {PRUNING: "true", "spark.sql.caseSensitive": "true"}
    if reader == "v1_rows":
        settings["spark.sql.parquet.enableVectorizedReader"] = "false"
    if reader.startswith("v2"):
        settings["spark.sql.sources.useV1SourceList"] = ""
    with confs(spark, settings):
        read = lambda: spark.read.schema("id INT").parquet(str(p)).where("id = 1")  # noqa: E731
        if reader == "v2_stages":
            # An exchange: adaptive execution makes the scan's stage (and a V2 scan's reader
            # factory) at the first run, under that run's settings.
            plain = read
            read = lambda: plain().groupBy("id").count().select("id")  # noqa: E731
        BloomIndex(spark).create("cs_run_ix", spark.read.schema("id INT").parquet(str(p)), ["id"])
        answers = {}
        for pruning in ("true", "false"):
            with confs(spark, {PRUNING: pruning, "spark.sql.caseSensitive": "true"}):
                df = read()
                if run == "explain_first":
                    text = BloomIndex(spark).explain(df)  # plans df, runs nothing
                    assert pruning == "false" or "cs_run_ix (log version 1) kept 0/2 files" in text, text
                    df.explain()  # df's physical plan (a V2 scan's decision is made in it)
                else:
                    df.cache()
                try:
                    with confs(spark, {"spark.sql.caseSensitive": "false"}):
                        answers[pruning] = [[r.id for r in df.collect()] for _ in range(2)]
                finally:
                    df.unpersist()
        assert answers["true"] == answers["false"], answers
        if reader.startswith("v1"):
            # A V1 scan reads with the settings of its first run: b's "ID" is id, which the index
            # skipped. (A V2 file scan takes its reader's settings when planned, also where
            # adaptive execution makes its stage at the first run: a V2 plan reads
            # case-sensitively still, with or without the index.)
            assert answers["false"] == [[1], [1]], answers
        # A plan made under the new setting does not use the index, and says why.
        with confs(spark, {"spark.sql.caseSensitive": "false"}):
            assert_not_applied(spark, read, "cs_run_ix", "case sensitivity")


@pytest.mark.parametrize("run", ["explain_first", "cache"])
def test_a_join_filter_first_run_under_other_decoding_settings_lets_every_row_through(spark, root, tmp_path, run):
    # As above, for the join filter: the indexed side (d) read under caseSensitive=false holds
    # id 1 (b's "ID"), which its global filter, built case-sensitively, never held; the other
    # side's row of key 1 must not be dropped before the join.
    import pyarrow as pa
    import pyarrow.parquet as pq

    d, f = tmp_path / "dim", tmp_path / "fact"
    d.mkdir()
    pq.write_table(pa.table({"id": pa.array([2], pa.int32())}), str(d / "a.parquet"))
    pq.write_table(pa.table({"ID": pa.array([1], pa.int32())}), str(d / "b.parquet"))
    with confs(spark, {"spark.sql.caseSensitive": "true", PRUNING: "true"}):
        spark.createDataFrame([(1, "x"), (2, "y"), (3, "z")], "k INT, v STRING").write.parquet(str(f))
        dim = lambda: spark.read.schema("id INT").parquet(str(d))  # noqa: E731
        BloomIndex(spark).create("cs_join_ix", dim(), ["id"], global_filter=True)
        answers = {}
        # The index on (the join filter, and the pruning of d's files), and off.
        for join_filter in ("true", "false"):
            with confs(spark, {JOIN_FILTER: join_filter, PRUNING: join_filter, "spark.sql.caseSensitive": "true"}):
                fact = spark.read.parquet(str(f))
                dims = dim()
                df = fact.join(dims, fact.k == dims.id).select(fact.k)
                if run == "explain_first":
                    text = BloomIndex(spark).explain(df)
                    assert join_filter == "false" or "join filter: index cs_join_ix" in text, text
                else:
                    df.cache()
                try:
                    with confs(spark, {"spark.sql.caseSensitive": "false"}):
                        answers[join_filter] = [sorted(r.k for r in df.collect()) for _ in range(2)]
                finally:
                    df.unpersist()
        assert answers["true"] == answers["false"], answers
        assert answers["false"] == [[1, 2], [1, 2]], answers


@pytest.mark.parametrize("partitioned", [False, True])
def test_a_plan_that_already_ran_reads_a_file_rewritten_in_place_after_refresh_table(spark, root, tmp_path, partitioned):
    # As above, with REFRESH TABLE between the rewrite and the second action: the table's file
    # index lists again (the rewritten file's new time), while the plan's first run fixed its
    # files from the listing before. Spark without the index reads the file's new bytes. A
    # partitioned table queried without a partition filter keeps the catalog's file index,
    # which holds no listing: the files skipped are those of the listing the first run read
    # (listed again at the second, the rewritten file's new time no longer matched the
    # decision, it was left out of the check: [125] where Spark answers [125, 700]).
    p = str(tmp_path / "pq")
    files = _partitioned_folder(spark, p) if partitioned else _parquet_folder(spark, p)
    v = 100 + 600
    try:
        part = " (k BIGINT, s STRING, q INT) USING parquet PARTITIONED BY (q)" if partitioned else " USING parquet"
        spark.sql(f"CREATE TABLE ran_refresh_t{part} LOCATION '{p}'")
        if partitioned:
            spark.sql("ALTER TABLE ran_refresh_t RECOVER PARTITIONS")
        spark.sql("CREATE BLOOM INDEX ran_refresh_ix ON ran_refresh_t FOR COLUMNS (k)")
        q = f"SELECT k FROM ran_refresh_t WHERE k IN (125, {v})"
        with confs(spark, {PRUNING: "false"}):
            without = spark.sql(q)  # the same plan without the index: planned and run now
            assert sorted(r.k for r in without.collect()) == [125]
        with confs(spark, {PRUNING: "true"}):
            df = spark.sql(q)
            assert sorted(r.k for r in df.collect()) == [125]
            assert_prunes(spark, lambda: spark.sql(q), "ran_refresh_ix")
            _rewrite_same_size(spark, files[0], 600)
            spark.sql("REFRESH TABLE ran_refresh_t")
            assert sorted(r.k for r in without.collect()) == [125, v]
            assert sorted(r.k for r in df.collect()) == [125, v]
            assert sorted(r.k for r in df.collect()) == [125, v]
    finally:
        _drop(spark, "ran_refresh_t")


def test_an_adaptive_plan_that_already_ran_reads_a_file_rewritten_in_place_before_its_next_action(spark, root,
                                                                                                tmp_path):
    # The pruned scan is the streamed side of a broadcast join, in the final stage of an adaptive
    # plan: a second action reuses the broadcast and runs the final stage's RDD again.
    p = str(tmp_path / "pq")
    files = _parquet_folder(spark, p)
    v = 100 + 600
    BloomIndex(spark).create("ran_join_ix", spark.read.parquet(p), ["k"])
    dim = spark.createDataFrame([(125, "a"), (v, "b"), (999, "c")], "k BIGINT, tag STRING")
    with confs(spark, {PRUNING: "true", "spark.sql.adaptive.enabled": "true"}):
        df = spark.read.parquet(p).where(f"k IN (125, {v})").join(dim.hint("broadcast"), "k").select("k", "tag")
        assert sorted(map(tuple, df.collect())) == [(125, "a")]
        assert "AdaptiveSparkPlan" in df._jdf.queryExecution().executedPlan().toString()
        _rewrite_same_size(spark, files[0], 600)
        assert sorted(map(tuple, df.collect())) == [(125, "a"), (v, "b")]


def test_a_join_run_in_a_later_execution_keeps_the_rows_of_a_file_rewritten_in_place(spark, root, tmp_path):
    # The join filter is chosen when the plan is optimized; the indexed side's file 0 is then
    # rewritten in place (same size, listing unchanged) with keys the filter does not hold:
    # run later, the plan must not drop the other side's rows that now match.
    p = str(tmp_path / "dim")
    files = _parquet_folder(spark, p)
    try:
        spark.sql(f"CREATE TABLE later_run_dim USING parquet LOCATION '{p}'")
        spark.sql("CREATE BLOOM INDEX later_run_dim_ix ON later_run_dim FOR COLUMNS (k) OPTIONS (global = true)")
        new = _not_held(spark, "later_run_dim_ix", range(700, 710))  # a key of the rewritten file
        spark.sql("CREATE TABLE later_run_fact (k BIGINT, v STRING) USING parquet")
        spark.sql(f"INSERT INTO later_run_fact VALUES (101, 'f1'), ({new}, 'fnew')")
        q = "SELECT f.v, d.k FROM later_run_fact f JOIN later_run_dim d ON f.k = d.k"
        with confs(spark, {JOIN_FILTER: "true"}):
            df = spark.sql(q)
            assert "join filter: index later_run_dim_ix" in BloomIndex(spark).explain(df)  # plans df, runs nothing
            _rewrite_same_size(spark, files[0], 600)  # file 0: k 100..109 -> 700..709 (101 is gone)
            assert sorted(map(tuple, df.collect())) == [("fnew", new)]
            assert sorted(map(tuple, df.collect())) == [("fnew", new)]
    finally:
        _drop(spark, "later_run_fact", "later_run_dim")


OUTDATED = "BLOOM_INDEX_JOIN_FILTER_OUTDATED"


@pytest.mark.parametrize("shape", ["broadcast", "no exchange"])
@pytest.mark.parametrize("adaptive", ["true", "false"])
def test_a_kept_filtered_side_is_never_joined_with_an_indexed_file_rewritten_in_place(spark, root, tmp_path, adaptive,
                                                                                       shape):
    # The other side is filtered by the global filter of the indexed side, which each action
    # reads again, and Spark keeps the filtered rows for the DataFrame's later actions: broadcast,
    # or (both sides in one partition, a sort-merge join with no exchange) read again through the
    # operator's RDD, which Spark builds once, with the filter decided at the first action. File 0
    # of the indexed side is rewritten in place between two actions (same size, new keys): Spark
    # answers with the new key's row; the filtered rows lack it (filtered against the old keys).
    # The second action must fail, naming the problem, rather than answer without it.
    p = str(tmp_path / "ix")
    files = _parquet_folder(spark, p)
    BloomIndex(spark).create("kept_side_ix", spark.read.parquet(p), ["k"], global_filter=True)
    new = _not_held(spark, "kept_side_ix", range(700, 710))
    op = str(tmp_path / "other")
    spark.createDataFrame([(101, "a"), (new, "b")], "k BIGINT, tag STRING").coalesce(1).write.parquet(op)

    def frame():
        if shape == "broadcast":
            return spark.read.parquet(p).join(spark.read.parquet(op).hint("broadcast"), "k").select("k", "tag")
        return spark.read.parquet(p).coalesce(1).join(spark.read.parquet(op).coalesce(1), "k").select("k", "tag")

    frames = {}
    with confs(spark, {"spark.sql.adaptive.enabled": adaptive, "spark.sql.autoBroadcastJoinThreshold": "-1"}):
        for enabled in ("false", "true"):
            with confs(spark, {JOIN_FILTER: enabled}):
                frames[enabled] = frame()
                assert sorted(map(tuple, frames[enabled].collect())) == [(101, "a")]
        plan = frames["true"]._jdf.queryExecution().executedPlan().toString()
        assert "BloomFilter [kept_side_ix.k" in plan and "JoinFilterGuard" in plan, plan
        assert ("Exchange" in plan) == (shape == "broadcast"), plan
        _rewrite_same_size(spark, files[0], 600)  # file 0: k 100..109 -> 700..709 (101 is gone)
        assert sorted(map(tuple, frames["false"].collect())) == [(new, "b")]  # Spark's answer
        with pytest.raises(AnalysisException) as e:
            frames["true"].collect()
        assert e.value.getCondition() == OUTDATED and p in str(e.value), str(e.value)
        # Planned again, the join is not filtered (the index is stale) and answers as Spark does.
        assert sorted(map(tuple, frame().collect())) == [(new, "b")]


def test_a_partition_stored_outside_its_table_is_guarded_too(spark, root, tmp_path):
    # The indexed side reads only a partition whose folder is outside the table's; a file of it
    # rewritten in place between two actions fails the second, as in the table's own folder (the
    # guard finds a scan by its roots or, where Spark lists only the partition's folder, by the
    # table's name).
    ext = str(tmp_path / "elsewhere")
    files = _parquet_folder(spark, ext)
    op = str(tmp_path / "other")
    try:
        spark.sql(f"CREATE TABLE cpl (k BIGINT, q INT) USING parquet PARTITIONED BY (q) LOCATION '{tmp_path / 'cpl'}'")
        spark.sql("INSERT INTO cpl PARTITION (q = 0) VALUES (1), (2)")
        spark.sql(f"ALTER TABLE cpl ADD PARTITION (q = 1) LOCATION '{ext}'")
        spark.sql("CREATE BLOOM INDEX cpl_ix ON cpl FOR COLUMNS (k) OPTIONS (global = true, refresh = 'manual')")
        new = _not_held(spark, "cpl_ix", range(700, 710))
        spark.createDataFrame([(101, "a"), (new, "b")], "k BIGINT, tag STRING").coalesce(1).write.parquet(op)
        frames = {}
        with confs(spark, {"spark.sql.autoBroadcastJoinThreshold": "-1"}):
            for enabled in ("false", "true"):
                with confs(spark, {JOIN_FILTER: enabled}):
                    frames[enabled] = spark.table("cpl").where("q = 1") \
                        .join(spark.read.parquet(op).hint("broadcast"), "k").select("k", "tag")
                    assert sorted(map(tuple, frames[enabled].collect())) == [(101, "a")]
            plan = frames["true"]._jdf.queryExecution().executedPlan().toString()
            assert "BloomFilter [cpl_ix.k" in plan and "JoinFilterGuard" in plan, plan
            _rewrite_same_size(spark, files[0], 600)
            assert sorted(map(tuple, frames["false"].collect())) == [(new, "b")]
            with pytest.raises(AnalysisException) as e:
                frames["true"].collect()
            assert e.value.getCondition() == OUTDATED, str(e.value)
    finally:
        _drop(spark, "cpl")


def test_a_kept_filtered_side_still_answers_after_a_file_it_does_not_read_is_deleted(spark, root, tmp_path):
    # The DataFrame reads partition q=0 of the indexed side; a file of q=1 is deleted between two
    # actions. The files the plan reads are unchanged: it answers as Spark does.
    p = str(tmp_path / "pix")
    files = _partitioned_folder(spark, p)
    BloomIndex(spark).create("kept_part_ix", spark.read.parquet(p), ["k"], global_filter=True)
    op = str(tmp_path / "other")
    spark.createDataFrame([(101, "a"), (125, "b"), (999, "c")], "k BIGINT, tag STRING").coalesce(1).write.parquet(op)
    frames = {}
    with confs(spark, {"spark.sql.autoBroadcastJoinThreshold": "-1"}):
        for enabled in ("false", "true"):
            with confs(spark, {JOIN_FILTER: enabled}):
                frames[enabled] = spark.read.parquet(p).where("q = 0") \
                    .join(spark.read.parquet(op).hint("broadcast"), "k").select("k", "tag")
                assert sorted(map(tuple, frames[enabled].collect())) == [(101, "a")]
        assert "JoinFilterGuard" in frames["true"]._jdf.queryExecution().executedPlan().toString()
        os.remove(files[3])
        assert sorted(map(tuple, frames["true"].collect())) == sorted(map(tuple, frames["false"].collect())) == [(101, "a")]


@pytest.mark.parametrize("adaptive", ["true", "false"])
def test_a_kept_filtered_side_still_answers_after_files_are_added_to_the_indexed_side(spark, root, adaptive):
    # The same shape, with rows appended to the indexed table between two actions (its listing is
    # refreshed in place): the DataFrame's scan reads the files it listed at its first action, which
    # the kept rows were filtered against and which did not change, so it answers as Spark does.
    try:
        spark.sql("CREATE TABLE kept_dim (k BIGINT, name STRING) USING parquet")
        spark.sql("INSERT INTO kept_dim VALUES (1, 'one'), (2, 'two')")
        spark.sql("CREATE BLOOM INDEX kept_dim_ix ON kept_dim FOR COLUMNS (k) OPTIONS (global = true, refresh = 'manual')")
        new = _not_held(spark, "kept_dim_ix", range(1000, 1100))
        other = spark.createDataFrame([(1, "f1"), (new, "fnew")], "k BIGINT, v STRING")
        frames = {}
        with confs(spark, {"spark.sql.adaptive.enabled": adaptive, "spark.sql.autoBroadcastJoinThreshold": "-1"}):
            for enabled in ("false", "true"):
                with confs(spark, {JOIN_FILTER: enabled}):
                    frames[enabled] = spark.table("kept_dim").join(other.hint("broadcast"), "k").select("v", "name")
                    assert sorted(map(tuple, frames[enabled].collect())) == [("f1", "one")]
            assert "JoinFilterGuard" in frames["true"]._jdf.queryExecution().executedPlan().toString()
            spark.sql(f"INSERT INTO kept_dim VALUES ({new}, 'new')")
            off = sorted(map(tuple, frames["false"].collect()))
            assert sorted(map(tuple, frames["true"].collect())) == off
    finally:
        _drop(spark, "kept_dim")


def test_a_join_run_after_its_indexed_side_changed_keeps_the_rows_of_the_new_keys(spark, root):
    # The join filter is chosen when the plan is optimized; an INSERT into the indexed side
    # before the plan runs refreshes that side's listing: the filter, which does not hold the
    # new key, must not drop the rows that now match.
    try:
        spark.sql("CREATE TABLE later_dim (k BIGINT, name STRING) USING parquet")
        spark.sql("INSERT INTO later_dim VALUES (1, 'one'), (2, 'two')")
        spark.sql("CREATE BLOOM INDEX later_dim_ix ON later_dim FOR COLUMNS (k) OPTIONS (global = true)")
        new = _not_held(spark, "later_dim_ix", range(1000, 1100))  # the filter decides its rows
        spark.sql("CREATE TABLE later_fact (k BIGINT, v STRING) USING parquet")
        spark.sql(f"INSERT INTO later_fact VALUES (1, 'f1'), ({new}, 'fnew')")
        q = "SELECT f.v, d.name FROM later_fact f JOIN later_dim d ON f.k = d.k"
        with confs(spark, {JOIN_FILTER: "true"}):
            df = spark.sql(q)
            assert "join filter: index later_dim_ix" in BloomIndex(spark).explain(df)  # plans df, runs nothing
            spark.sql(f"INSERT INTO later_dim VALUES ({new}, 'new')")
            assert sorted(map(tuple, df.collect())) == [("f1", "one"), ("fnew", "new")]
            # Planned again, the join is not filtered (the index is stale) and answers the same.
            assert sorted(map(tuple, spark.sql(q).collect())) == [("f1", "one"), ("fnew", "new")]
    finally:
        _drop(spark, "later_fact", "later_dim")


def test_an_index_of_a_data_column_does_not_answer_for_a_partition_column_of_that_name(spark, root, tmp_path):
    # Files under k=1/ and k=2/ also hold a data column k (10 and 20). Read recursively, k is
    # the files' column, and that is what the index holds; read plainly, k is the partition
    # column (the folder names): the index must not answer for it.
    p = str(tmp_path / "kk")
    for folder, value in ((1, 10), (2, 20)):
        os.makedirs(os.path.join(p, f"k={folder}"))
        _write_parquet_file(spark, os.path.join(p, f"k={folder}", "part-0.parquet"), [value, value])
    BloomIndex(spark).create("kk_ix", spark.read.option("recursiveFileLookup", "true").parquet(p), ["k"])

    def plain(v):
        return lambda: spark.read.parquet(p).where(f"k = {v}").select("s", "k")

    assert len(same(spark, plain(1), "partition column k = 1")) == 2
    assert same(spark, plain(10), "partition column k = 10") == []
    assert_not_applied(spark, plain(1), "kk_ix", "partition column")
    # Read as it was indexed, the index answers.
    rec = lambda: spark.read.option("recursiveFileLookup", "true").parquet(p).where("k = 10").select("k")
    assert same(spark, rec, "data column k = 10") == [(10,), (10,)]
    assert_prunes(spark, rec, "kk_ix")


# Without write-task filters the refresh reads the appended file (k without an id: the decoding
# check); with them, the tasks' filters of k (no id, or id 8) must not be taken for id 7's column
# (whichever file's footer Spark infers the folder's schema from).
@pytest.mark.parametrize("new_k_id,task_filters", [(None, "0"), (None, "100000"), (8, "100000")])
def test_parquet_field_ids_read_by_id_after_an_on_write_append(spark, root, tmp_path, new_k_id, task_filters):
    # A session reading Parquet by field id reads each file's column of the id, whatever its
    # name. File 1 has k with id 7; an append writes k (id 8, or none) and j with id 7: read as
    # k by id 7, the appended file's values are j's. Neither the write's tasks (which hash the
    # column by name) nor a refresh reading the file by name may answer for it.
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    def fid(c, i):
        return F.col(c).alias(c, metadata={"parquet.field.id": i})

    p = str(tmp_path / "ids")
    with confs(spark, {"spark.sql.parquet.fieldId.read.enabled": "true", "spark.sql.parquet.filterPushdown": "false",
                       "spark.bloomindex.refresh.writeTaskFilters": task_filters}):
        spark.createDataFrame([(i, f"v{i}") for i in range(10)], "k BIGINT, s STRING") \
            .select(fid("k", 7), "s").coalesce(1).write.parquet(p)
        spark.sql(f"CREATE BLOOM INDEX ids_ix ON parquet.`{p}` FOR COLUMNS (k) OPTIONS (refresh = 'on_write')")
        new = spark.createDataFrame([(1000 + i, 2000 + i, f"w{i}") for i in range(5)], "k BIGINT, j BIGINT, s STRING")
        new.select(F.col("k") if new_k_id is None else fid("k", new_k_id), fid("j", 7), "s") \
            .coalesce(1).write.mode("append").parquet(p)
        schema = StructType([StructField("k", LongType(), True, {"parquet.field.id": 7}), StructField("s", StringType())])
        by_id = lambda v: (lambda: spark.read.schema(schema).parquet(p).where(f"k = {v}"))
        assert same(spark, by_id(2003), "k = 2003 by field id 7") == [(2003, "w3")]
        assert same(spark, by_id(3), "k = 3 by field id 7") == [(3, "v3")]
        assert same(spark, by_id(1003), "k = 1003 by field id 7") == []


# ---------------------------------------------------------------------------------------------
# equality under a collation: filters of collation keys


@pytest.mark.parametrize("collation", ["UTF8_LCASE", "UNICODE_CI", "UNICODE", "UTF8_BINARY_RTRIM", "UTF8_LCASE_RTRIM"])
def test_collated_columns_prune_by_collation_key(spark, root, collation):
    t = f"coll_{collation.lower()}"
    _drop(spark, t)
    try:
        spark.sql(f"CREATE TABLE {t} (s STRING COLLATE {collation}, id INT) USING parquet")
        for i in range(4):  # one file per INSERT
            spark.sql(f"INSERT INTO {t} VALUES ('Abc{i}', {10 * i}), ('straße{i}', {10 * i + 1}), "
                      f"('x{i}  ', {10 * i + 2}), ('ÉCOLE{i}', {10 * i + 3}), (NULL, {10 * i + 4})")
        spark.sql(f"CREATE BLOOM INDEX {t}_ix ON {t} FOR COLUMNS (s)")
        for lit in ("'abc1'", "'ABC1'", "'Abc1'", "'STRASSE2'", "'straße2'", "'x3'", "'x3  '", "'X3 '",
                    "'école0'", "'ÉCOLE0'", "'nothing'"):
            q = f"SELECT id FROM {t} WHERE s = {lit}"
            same(spark, lambda: spark.sql(q), f"{collation}: {q}")
        q = f"SELECT id FROM {t} WHERE s IN ('ÉCOLE2', 'abc2', 'zz')"
        assert same(spark, lambda: spark.sql(q)) != []
        assert_prunes(spark, lambda: spark.sql(q), f"{t}_ix")
        assert_prunes(spark, lambda: spark.sql(f"SELECT id FROM {t} WHERE s = 'Abc1'"), f"{t}_ix")
    finally:
        _drop(spark, t)


def test_collated_index_built_before_collation_keys_is_not_used(spark, root, tmp_path):
    """An index whose log says its filters hold the strings' bytes (as builds before collation
    keys wrote them) is not used for the collated column until REFRESH ... FULL."""
    import json
    from test_decoding_regressions import clear_index_cache, newest_active_log_file

    _drop(spark, "coll_old")
    try:
        spark.sql("CREATE TABLE coll_old (s STRING COLLATE UTF8_LCASE, id INT) USING parquet")
        for i in range(3):
            spark.sql(f"INSERT INTO coll_old VALUES ('abc{i}', {i})")
        spark.sql("CREATE BLOOM INDEX coll_old_ix ON coll_old FOR COLUMNS (s)")
        path = newest_active_log_file(root, "coll_old_ix")
        entry = json.load(open(path))
        for c in entry["data"]["decoding"]["columns"]:
            c["physical"].pop("keys", None)
        os.remove(path)
        with open(path, "w") as out:
            out.write(entry_text(entry))
        clear_index_cache(spark)
        q = "SELECT id FROM coll_old WHERE s = 'ABC1'"
        assert same(spark, lambda: spark.sql(q)) == [(1,)]
        assert_not_applied(spark, lambda: spark.sql(q), "coll_old_ix", "collation keys")
        spark.sql("REFRESH BLOOM INDEX coll_old_ix FULL")
        assert_prunes(spark, lambda: spark.sql(q), "coll_old_ix")
    finally:
        _drop(spark, "coll_old")


COLLATION_DATA = "spark.internal.bloomindex.test.collationDataVersion"


@pytest.mark.parametrize("collation", ["UNICODE_CI", "UTF8_LCASE"])
def test_collation_keys_of_other_icu_data_are_not_used(spark, root, collation):
    """Collation keys come from ICU's data, which Spark bundles and which changes between its
    releases (Spark 4.1: ICU 77.1; 4.2 and 4.3: ICU 78.3, under which '#', '@' and '%' sort, and
    so key, otherwise): an index whose keys were computed with other data (the test hook stands in
    for the other Spark) is not used, an incremental REFRESH refuses to add keys of this data to
    it, REFRESH ... FULL computes them again; an index built before the data was recorded is
    not used either."""
    import json
    from pyspark.errors import AnalysisException
    from test_decoding_regressions import clear_index_cache, newest_active_log_file

    t, ix = f"coll_icu_{collation.lower()}", f"coll_icu_{collation.lower()}_ix"
    _drop(spark, t)
    try:
        spark.sql(f"CREATE TABLE {t} (s STRING COLLATE {collation}, id INT) USING parquet")
        for i in range(4):
            spark.sql(f"INSERT INTO {t} VALUES ('a#{i}', {i}), ('x@y{i}.com', {10 + i})")
        with confs(spark, {COLLATION_DATA: "icu-test-other"}):
            spark.sql(f"CREATE BLOOM INDEX {ix} ON {t} FOR COLUMNS (s)")
            # Under the data it was built with, the index is used.
            assert_prunes(spark, lambda: spark.sql(f"SELECT id FROM {t} WHERE s = 'A#1'"), ix)
        for q in (f"SELECT id FROM {t} WHERE s = 'A#1'", f"SELECT id FROM {t} WHERE s IN ('X@Y2.COM', 'zz')"):
            assert same(spark, lambda: spark.sql(q), q) != []
            assert_not_applied(spark, lambda: spark.sql(q), ix, "collation keys computed with icu-test-other")
        spark.sql(f"INSERT INTO {t} VALUES ('b%1', 20)")
        with pytest.raises(AnalysisException, match="collation keys computed with icu-test-other"):
            spark.sql(f"REFRESH BLOOM INDEX {ix}")
        spark.sql(f"REFRESH BLOOM INDEX {ix} FULL")
        q = f"SELECT id FROM {t} WHERE s = 'B%1'"
        assert same(spark, lambda: spark.sql(q), q) == [(20,)]
        assert_prunes(spark, lambda: spark.sql(q), ix)

        # An index of before this change: keyed, with no version of the data recorded.
        path = newest_active_log_file(root, ix)
        entry = json.load(open(path))
        for c in entry["data"]["decoding"]["columns"]:
            assert c["physical"].pop("keysData", None) is not None, c
        os.remove(path)
        with open(path, "w") as out:
            out.write(entry_text(entry))
        clear_index_cache(spark)
        assert same(spark, lambda: spark.sql(q), q) == [(20,)]
        assert_not_applied(spark, lambda: spark.sql(q), ix, "unrecorded version")
    finally:
        _drop(spark, t)


def _char_table(spark, table, index, loc, inserts, other_writer):
    """A CHAR(5) table at `loc` written by Spark (`inserts`) and by another writer (the pyarrow
    table `other_writer`, its values stored as they are, unpadded), then indexed on `c`."""
    import pyarrow.parquet as pq

    spark.sql(f"CREATE TABLE {table} (c CHAR(5), id INT) USING parquet LOCATION '{loc}'")
    for statement in inserts:
        spark.sql(statement)
    pq.write_table(other_writer, os.path.join(loc, "other-writer.parquet"))
    spark.sql(f"REFRESH TABLE {table}")
    spark.sql(f"CREATE BLOOM INDEX {index} ON {table} FOR COLUMNS (c)")


@pytest.mark.parametrize("setting", [("spark.sql.legacy.charVarcharAsString", "true"),
                                     ("spark.sql.readSideCharPadding", "false")])
def test_char_columns_of_a_text_table_under_other_char_settings_are_not_pruned(spark, root, tmp_path, setting):
    """A CHAR(3) column of a CSV table is indexed from Spark's read of its rows, padded ('a  ');
    a query under a setting that compares the stored value ('a') otherwise does not use the
    index (it skipped the file: [] where Spark answers [(1,)]); an index built under the same
    setting answers as without it (and prunes, where the query compares a literal)."""
    d = tmp_path / "csv"
    d.mkdir()
    (d / "part-0.csv").write_text("a,1\n")
    (d / "part-1.csv").write_text("zz,2\n")
    _drop(spark, "char_csv")
    try:
        spark.sql(f"CREATE TABLE char_csv (c CHAR(3), id INT) USING csv LOCATION '{d}'")
        spark.sql("CREATE BLOOM INDEX char_csv_ix ON char_csv FOR COLUMNS (c)")
        q = "SELECT id FROM char_csv WHERE c = 'a'"
        assert same(spark, lambda: spark.sql(q), q) == [(1,)]
        assert_prunes(spark, lambda: spark.sql(q), "char_csv_ix")
        key, value = setting
        with confs(spark, {key: value}):
            expected = same(spark, lambda: spark.sql(q), q)
            assert_not_applied(spark, lambda: spark.sql(q), "char_csv_ix", key)
            spark.sql("REFRESH BLOOM INDEX char_csv_ix FULL")
            assert same(spark, lambda: spark.sql(q), q) == expected
            if key == "spark.sql.legacy.charVarcharAsString":  # without read-side padding the literal is padded by an expression: never probed
                assert_prunes(spark, lambda: spark.sql("SELECT id FROM char_csv WHERE c = 'zz'"), "char_csv_ix")
    finally:
        _drop(spark, "char_csv")


def test_char_columns_under_read_side_padding(spark, root, tmp_path):
    """CHAR(n) is read padded to n characters (spark.sql.readSideCharPadding, the default):
    `c = 'ab'` compares readSidePadding(c, 5) with 'ab   '. Spark stores CHAR values padded; a
    file written by another engine may hold 'ab' or 'ab ' unpadded, which read the same. Every
    stored form that pads to the value is probed."""
    import pyarrow as pa

    loc = str(tmp_path / "chars")
    _drop(spark, "chars_t")
    try:
        # Another writer: unpadded values, one with a trailing space, and a five-character one.
        _char_table(spark, "chars_t", "chars_ix", loc,
                    [f"INSERT INTO chars_t VALUES ('k{i}', {i}), ('k{i}x', {10 + i})" for i in range(3)],
                    pa.table({"c": ["ab", "cd ", "efghi"], "id": pa.array([100, 101, 102], pa.int32())}))
        for q, rows in [("SELECT id FROM chars_t WHERE c = 'ab'", [(100,)]),
                        ("SELECT id FROM chars_t WHERE c = 'cd'", [(101,)]),
                        ("SELECT id FROM chars_t WHERE c = 'cd   '", [(101,)]),
                        ("SELECT id FROM chars_t WHERE c = 'efghi'", [(102,)]),
                        ("SELECT id FROM chars_t WHERE c = 'k1'", [(1,)]),
                        ("SELECT id FROM chars_t WHERE c IN ('k2x', 'ab')", [(12,), (100,)])]:
            assert sorted(same(spark, lambda: spark.sql(q))) == rows, q
            assert_prunes(spark, lambda: spark.sql(q), "chars_ix")
        # A value no file holds in any form: every file may be skipped, no row either way.
        q = "SELECT id FROM chars_t WHERE c = 'zz'"
        assert same(spark, lambda: spark.sql(q)) == []
    finally:
        _drop(spark, "chars_t")


@pytest.mark.parametrize("collation", ["UNICODE_CI", "UNICODE", "UTF8_LCASE"])
def test_collated_char_columns_are_not_pruned_on_padded_forms(spark, root, tmp_path, collation):
    """CHAR(n) COLLATE x is compared padded under the collation: another writer's unpadded 'a',
    read as 'a ', equals 'a' + NO-BREAK SPACE under UNICODE_CI (the two spaces differ only
    below its strength) and 'a ' + ZERO WIDTH SPACE under UNICODE (ignorable). The forms the
    index would probe (the literal and it without trailing spaces) hold the byte-wise padding
    only, so a collated CHAR compared this way is not pruned on (it skipped the file: [] where
    Spark answers the row)."""
    import pyarrow as pa

    table, loc = f"chars_{collation.lower()}", str(tmp_path / f"chars_{collation}")
    _drop(spark, table)
    try:
        spark.sql(f"CREATE TABLE {table} (c CHAR(3) COLLATE {collation}, id INT) USING parquet LOCATION '{loc}'")
        spark.sql(f"INSERT INTO {table} VALUES ('k1', 1), ('k2', 2)")
        import pyarrow.parquet as pq
        pq.write_table(pa.table({"c": ["a", "b\u0130"], "id": pa.array([100, 101], pa.int32())}),
                       os.path.join(loc, "other-writer.parquet"))
        spark.sql(f"REFRESH TABLE {table}")
        spark.sql(f"CREATE BLOOM INDEX {table}_ix ON {table} FOR COLUMNS (c)")
        for literal in ["'a\u00a0 '", "'a \u200b'", "'a  '", "'B\u0130 '", "'bi\u0307'", "'k1 '"]:
            q = f"SELECT id FROM {table} WHERE c = {literal}"
            same(spark, lambda: spark.sql(q), q)
            k = kept(report(spark, lambda: spark.sql(q)), f"{table}_ix")
            assert k is None or k[0] == k[1], (q, k)
        assert sorted(same(spark, lambda: spark.sql(f"SELECT id FROM {table} WHERE c = 'a'"))) == [(100,)]
    finally:
        _drop(spark, table)


def test_char_equality_with_malformed_literal_is_not_pruned(spark, tmp_path):
    """A CHAR literal that is not valid UTF-8 (`CAST(X'41C3' AS STRING)`) is compared by its
    bytes, padded as Spark counts its characters; decoded, it would be probed as other bytes
    (U+FFFD's), and the files holding it would be skipped. Such a literal is not pruned on."""
    import pyarrow as pa

    loc = str(tmp_path / "chars_bad")
    _drop(spark, "chars_bad")
    try:
        # Another writer's malformed values, unpadded and padded.
        values = [b"A\xc3", b"A\xc3 ", b"A\xc3   ", b"B\xff\xfe", b"B\xff\xfe  "]
        _char_table(spark, "chars_bad", "chars_bad_ix", loc,
                    [f"INSERT INTO chars_bad VALUES ('k{i}', {i})" for i in range(3)]
                    + ["INSERT INTO chars_bad SELECT CAST(X'41C3' AS STRING), 7"],
                    pa.table({"c": pa.array(values, pa.binary()),
                              "id": pa.array(range(100, 100 + len(values)), pa.int32())}))
        for literal, rows in [("X'41C3'", [(100,)]), ("X'41C320'", [(7,), (101,), (102,)]),
                              ("X'42FFFE'", [(103,), (104,)])]:
            q = f"SELECT id FROM chars_bad WHERE c = CAST({literal} AS STRING)"
            assert sorted(same(spark, lambda: spark.sql(q))) == rows, q
            k = kept(report(spark, lambda: spark.sql(q)), "chars_bad_ix")
            assert k is not None and k[0] == k[1], (q, k)  # no file skipped
        # A well-formed literal on the same table is still pruned on.
        q = "SELECT id FROM chars_bad WHERE c = 'k1'"
        assert same(spark, lambda: spark.sql(q)) == [(1,)]
        assert_prunes(spark, lambda: spark.sql(q), "chars_bad_ix")
    finally:
        _drop(spark, "chars_bad")
