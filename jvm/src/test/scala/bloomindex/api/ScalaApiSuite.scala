package bloomindex.api

import scala.jdk.CollectionConverters._

import bloomindex.testing.{TempDirs, TestSpark}

import org.apache.spark.sql.{AnalysisException, DataFrame, SparkSession}
import org.apache.spark.sql.functions.col
import org.scalatest.BeforeAndAfterEach
import org.scalatest.funsuite.AnyFunSuite

/** The Scala and Java API ([[BloomIndex]]) on a local session: each operation, its errors, and pruning. */
class ScalaApiSuite extends AnyFunSuite with BeforeAndAfterEach {

  private lazy val spark: SparkSession = TestSpark.session

  override def beforeEach(): Unit = {
    spark.conf.set("spark.bloomindex.root", TempDirs.create("bloomindex-root").toString)
  }

  /** 8 parquet files of 1,000 ids each (file k holds k*1000 until (k+1)*1000) and a string column. */
  private def writeSource(): String = {
    val path = TempDirs.create("bloomindex-src").resolve("events").toString
    spark.range(0, 8000, 1, 8).selectExpr("id", "concat('s', id) AS s").write.parquet(path)
    path
  }

  private def withPruning[T](enabled: Boolean)(f: => T): T = {
    spark.conf.set("spark.bloomindex.pruning.enabled", enabled.toString)
    try f finally spark.conf.unset("spark.bloomindex.pruning.enabled")
  }

  private def condition(f: => Any): String = intercept[AnalysisException](f).getCondition

  test("history(): the scans the session's queries planned, as bloom_index_history() shows them") {
    val path = writeSource()
    val bi = BloomIndex(spark)
    assert(bi.create("hist_api").onPath("parquet", path).column("id").execute())
    assert(spark.read.parquet(path).where(col("id") === 4242L).collect().length == 1)
    val rows = bi.history().collect().toSeq
    assert(rows.size == 1, rows)
    val r = rows.head
    assert(r.getAs[String]("index_name") == "hist_api" && r.getAs[Long]("files_listed") == 8L && r.getAs[Long]("files_read") == 1L)
    assert(r.getSeq[org.apache.spark.sql.Row](r.fieldIndex("predicates")).map(p => (p.getString(0), p.getString(1), p.getInt(2))) == Seq(("id", "=", 1)))
    assert(spark.sql("SELECT files_read FROM bloom_index_history()").collect().map(_.getLong(0)).toSeq == Seq(1L))
  }

  test("fpp auto: the default of new indexes here (the suites leave the default), the builder's fppAuto(); chosen, kept by REFRESH") {
    val path = writeSource()
    val bi = BloomIndex(spark)
    assert(bi.create("auto_default").onPath("parquet", path).column("id").execute())
    assert(bi.create("auto_builder").onPath("parquet", path).column("id").column("s", Map("fpp" -> "0.05")).fppAuto().execute())
    assert(bi.create("auto_text").onPath("parquet", path).column("id").fpp("AUTO").execute())
    val Chosen = """auto \(chosen ([0-9.E-]+)\)""".r
    def chosen(name: String): Double = bi.describe(name)("column.id.fpp") match {
      case Chosen(p) => p.toDouble
      case other => fail(s"$name: $other")
    }
    Seq("auto_default", "auto_builder", "auto_text").foreach(n => assert(chosen(n) >= 1e-6 && chosen(n) <= 0.1, n))
    assert(bi.describe("auto_builder")("column.s.fpp") == "0.05")
    spark.range(8000, 9000, 1, 1).selectExpr("id", "concat('s', id) AS s").write.mode("append").parquet(path)
    bi.refresh("auto_builder")
    assert(chosen("auto_builder") >= 1e-6)
    assert(new bloomindex.log.IndexRoot(spark).log("auto_builder").lastActive().get.spec.columns.map(_.fppAuto) == Seq(true, false))
    val query = () => spark.read.parquet(path).where(col("id").isin(42L, 8500L, 123456L))
    val off = withPruning(enabled = false)(query().collect().toSeq.map(_.getLong(0)).sorted)
    assert(query().collect().toSeq.map(_.getLong(0)).sorted == off && off == Seq(42L, 8500L))
    assert(condition(bi.create("bad").onPath("parquet", path).column("id").fpp("autox").execute()) == "BLOOM_INDEX_INVALID_OPTION_VALUE")
  }

  test("create on a table with the builder; a point query reads fewer files and answers as without the index") {
    val table = "api_orders"
    spark.range(0, 8000, 1, 8).selectExpr("id AS user_id", "id % 7 AS amount").write.saveAsTable(table)
    try {
      val bi = BloomIndex(spark)
      assert(bi.create("orders_idx").onTable(table).column("user_id").fpp(0.01).execute())
      val query = () => spark.table(table).where(col("user_id") === 4242L)
      val off = withPruning(enabled = false)(query().collect().toSeq)
      val on = query()
      assert(on.collect().toSeq == off && off.map(_.getLong(0)) == Seq(4242L))
      val all = withPruning(enabled = false)(query().inputFiles.length)
      assert(all == 8)
      assert(on.inputFiles.length < all && on.inputFiles.length >= 1, on.inputFiles.toSeq)
      val report = bi.explain(on)
      assert(report.contains("index orders_idx (log version 1) kept") && report.contains("/8 files"), report)
    } finally spark.sql(s"DROP TABLE IF EXISTS $table")
  }

  test("text filters: tokens and n-grams prune LIKE, contains, ILIKE and = as without the index; errors name the problem") {
    val path = TempDirs.create("bloomindex-src").resolve("logs").toString
    // File k holds trace ids k*500 until (k+1)*500 and one word of its own ('wordK').
    spark.range(0, 4000, 1, 8).selectExpr("id",
      "concat('GET /api/', CAST(id % 5 AS STRING), ' trace-', lpad(CAST(id AS STRING), 6, '0'), ' ', " +
        "CASE WHEN id % 2 = 0 THEN concat('Word', CAST(floor(id / 500) AS STRING)) ELSE 'plain' END) AS msg")
      .write.parquet(path)
    val bi = BloomIndex(spark)
    assert(bi.create("logs_text").onPath("parquet", path).column("id").tokens("msg", Map("case" -> "lower"))
      .ngrams("msg", 4).execute())
    val d = bi.describe("logs_text")
    assert(d("columns") == "id, msg USING TOKENS, msg USING NGRAMS(4)", d)
    assert(d("column.msg#tokens.text").contains("case=lower") && d("column.msg#ngrams4.files") == "8", d)
    val df = spark.read.parquet(path)
    def check(condition: String, maxFiles: Int): Unit = {
      val off = withPruning(enabled = false)(df.where(condition).collect().toSet)
      val on = df.where(condition)
      assert(on.collect().toSet == off, condition)
      assert(off.nonEmpty, condition)
      assert(on.inputFiles.length <= maxFiles, s"$condition: ${on.inputFiles.length} files")
    }
    check("msg LIKE '%trace-001234%'", 2)              // 4-grams
    check("contains(msg, 'race-0037')", 2)
    check("msg ILIKE '% WORD3'", 2)                     // tokens, folded: 'word3' bounded by ' ' and the end
    check("lower(msg) LIKE '%word5'", 8)                // the token is not bounded on the left: only 4-grams (case-sensitive) are there
    check("msg = 'GET /api/2 trace-000007 plain'", 2)   // = through the filters' units
    check("msg RLIKE 'trace-0012[0-9]{2}'", 2)
    val report = bi.explain(df.where("msg LIKE '%trace-001234%'"))
    assert(report.contains("msg USING NGRAMS(4) probed all of ['trac'"), report)
    val none = bi.explain(df.where("msg LIKE '%ab%'"))
    assert(none.contains("no literal run of 4 or more characters"), none)
    // Errors name the problem; nothing is created.
    assert(condition(bi.create("bad").onPath("parquet", path).tokens("id").execute()) == "BLOOM_INDEX_UNSUPPORTED_COLUMN_TYPE")
    assert(condition(bi.create("bad").onPath("parquet", path).ngrams("msg", 0).execute()) == "BLOOM_INDEX_INVALID_OPTION_VALUE")
    assert(condition(bi.create("bad").onPath("parquet", path).ngrams("msg", 3, Map("separators" -> " ")).execute()) ==
      "BLOOM_INDEX_INVALID_OPTION_VALUE")
    assert(condition(bi.create("bad").onPath("parquet", path).tokens("msg", Map("case" -> "upper")).execute()) ==
      "BLOOM_INDEX_INVALID_OPTION_VALUE")
    assert(condition(bi.create("bad").onPath("parquet", path).tokens("msg").tokens("msg").execute()) ==
      "BLOOM_INDEX_DUPLICATE_COLUMN")
    assert(!bi.list().collect().exists(_.getString(0) == "bad"))
  }

  test("an index created with refresh = on_write covers a DataFrame append as soon as it returns; a manual one does not") {
    val path = writeSource()
    val bi = BloomIndex(spark)
    assert(bi.create("follows").onPath("parquet", path).column("id").option("refresh", "on_write").execute())
    assert(bi.create("stays").onPath("parquet", path).column("id").option("refresh", "manual").execute())
    assert(bi.describe("follows")("refresh") == "on_write" && bi.describe("stays")("refresh") == "manual")
    spark.range(9000, 9100, 1, 1).selectExpr("id", "concat('s', id) AS s").write.mode("append").parquet(path)
    assert(bi.describe("follows")("files_indexed") == "9" && bi.describe("follows")("log_version") == "3")
    assert(bi.describe("stays")("files_indexed") == "8" && bi.describe("stays")("log_version") == "1")
    val query = () => spark.read.parquet(path).where(col("id") === 9042L)
    assert(query().collect().map(_.getLong(0)).toSeq == Seq(9042L))
    assert(bi.explain(query()).contains("index follows (log version 3) kept 1/9 files"), bi.explain(query()))
  }

  test("create on a path and on a DataFrame; list, describe, refresh after an append, drop") {
    val path = writeSource()
    val bi = BloomIndex(spark)
    assert(bi.create("by_path").onPath("PARQUET", path).columns("id", "s").option("sizing", "power-of-two").execute())
    assert(bi.create("by_frame").onDataFrame(spark.read.parquet(path)).column("s", Map("fpp" -> "0.05")).execute())
    val listed = bi.list().collect().map(r => r.getAs[String]("name") -> r.getAs[Long]("files_indexed")).toMap
    assert(listed == Map("by_path" -> 8L, "by_frame" -> 8L))

    val d = bi.describe("by_path")
    assert(d("files_indexed") == "8" && d.get("nope").isEmpty)
    assert(d.rows.map(_._1).distinct == d.rows.map(_._1) && d.toMap("files_indexed") == "8")
    intercept[NoSuchElementException](d("nope"))

    spark.range(8000, 9000, 1, 1).selectExpr("id", "concat('s', id) AS s").write.mode("append").parquet(path)
    val v = bi.refresh("by_path")
    assert(v > 1 && bi.describe("by_path")("files_indexed") == "9")
    assert(bi.refresh("by_path", full = true) > v)
    val q = spark.read.parquet(path).where(col("id") === 8500L)
    assert(q.collect().map(_.getLong(0)).toSeq == Seq(8500L))
    assert(q.inputFiles.length < 9)

    assert(bi.drop("by_path"))
    assert(!bi.drop("by_path", ifExists = true))
    assert(condition(bi.drop("by_path")) == "BLOOM_INDEX_NOT_FOUND")
    assert(bi.list().collect().map(_.getAs[String]("name")).toSeq == Seq("by_frame"))
  }

  test("ifNotExists, and bad input refused with its condition before anything is written") {
    val path = writeSource()
    val bi = BloomIndex(spark)
    assert(condition(bi.create("no_source").column("id").execute()) == "BLOOM_INDEX_NO_SOURCE")
    assert(condition(bi.create("bad/name").onPath("parquet", path).column("id").execute()) == "BLOOM_INDEX_INVALID_NAME")
    assert(condition(bi.create("ix").onPath("parquet", path).execute()) == "BLOOM_INDEX_NO_COLUMNS")
    assert(condition(bi.create("ix").onPath("parquet", path).column("nope").execute()) == "BLOOM_INDEX_SOURCE_COLUMN_NOT_FOUND")
    assert(condition(bi.create("ix").onPath("parquet", path).column("id").option("colour", "red").execute()) ==
      "BLOOM_INDEX_UNKNOWN_OPTION")
    assert(condition(bi.create("ix").onPath("parquet", path).column("id").fpp(1.5).execute()) == "BLOOM_INDEX_INVALID_OPTION_VALUE")
    assert(condition(bi.create("ix").onTable("no_such_table").column("id").execute()) == "BLOOM_INDEX_SOURCE_NOT_FOUND")
    assert(bi.list().count() == 0)
    assert(condition(bi.refresh("ix")) == "BLOOM_INDEX_NOT_FOUND")
    assert(condition(bi.describe("ix")) == "BLOOM_INDEX_NOT_FOUND")

    assert(bi.create("ix").onPath("parquet", path).column("id").execute())
    assert(!bi.create("ix").onPath("parquet", path).column("s").ifNotExists().execute())
    assert(condition(bi.create("ix").onPath("parquet", path).column("s").execute()) == "BLOOM_INDEX_ALREADY_EXISTS")
    assert(bi.describe("ix")("columns").contains("id"))
  }

  test("global filters: prefilter and mightContain keep every matching row") {
    val path = writeSource()
    val bi = BloomIndex(spark)
    val dim = TempDirs.create("bloomindex-dim").resolve("dim").toString
    spark.range(0, 8000, 100, 2).toDF("id").write.parquet(dim)
    bi.create("dim_idx").onPath("parquet", dim).column("id").globalFilter().fpp(0.01).execute()
    val facts = spark.read.parquet(path)
    val kept = bi.prefilter(facts, "id", "dim_idx", "id").collect().map(_.getLong(0)).toSet
    val expected = (0L until 8000L by 100L).toSet
    assert(expected.subsetOf(kept))
    assert(kept.size < 8000 / 4, s"the filter kept ${kept.size} of 8000 rows")
    val byColumn: DataFrame = facts.filter(BloomIndex.mightContain("dim_idx", "id", col("id")))
    assert(byColumn.collect().map(_.getLong(0)).toSet == kept)
    // Stale after an append to the indexed side: refused unless allowStale.
    spark.range(9000, 9001).toDF("id").write.mode("append").parquet(dim)
    assert(condition(bi.prefilter(facts, "id", "dim_idx", "id").collect()) == "BLOOM_INDEX_STALE")
    assert(bi.prefilter(facts, "id", "dim_idx", "id", allowStale = true).count() == kept.size)
  }

  test("the API from Java") {
    val path = writeSource()
    val described = JavaApiUsage.createRefreshDescribe(spark, "from_java", path).asScala
    assert(described("files_indexed") == "8")
    assert(described.keys.toSeq.take(1) == BloomIndex(spark).describe("from_java").rows.take(1).map(_._1))
    assert(JavaApiUsage.list(spark).collect().map(_.getAs[String]("name")).toSeq == Seq("from_java"))
    assert(JavaApiUsage.drop(spark, "from_java") && !JavaApiUsage.drop(spark, "from_java"))
  }
}
