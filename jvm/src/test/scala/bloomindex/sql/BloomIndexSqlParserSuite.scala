package bloomindex.sql

import org.apache.spark.sql.catalyst.parser.{CatalystSqlParser, ParseException}
import org.scalatest.funsuite.AnyFunSuite

/** The parser on its own: no Spark session needed. */
class BloomIndexSqlParserSuite extends AnyFunSuite {

  private val parser = new BloomIndexSqlParser(CatalystSqlParser)

  test("CREATE BLOOM INDEX with column and table options") {
    val plan = parser.parsePlan(
      """create bloom index if not exists orders_uid on db.orders
        |  for columns (user_id options (fpp = 0.001, ndv = 1000), `weird col`, email)
        |  options ('global' = true, sizing = "power-of-two");""".stripMargin)
    assert(plan == CreateBloomIndexCommand("orders_uid", SourceRef(Seq("db", "orders")),
      Seq(ColumnRequest("user_id", Map("fpp" -> "0.001", "ndv" -> "1000")), ColumnRequest("weird col", Map.empty),
        ColumnRequest("email", Map.empty)),
      Map("global" -> "true", "sizing" -> "power-of-two"), ifNotExists = true))
  }

  test("a path source, and the other statements") {
    assert(parser.parsePlan("CREATE BLOOM INDEX i ON parquet.`/data/t` FOR COLUMNS (a)") ==
      CreateBloomIndexCommand("i", SourceRef(Seq("parquet", "/data/t")), Seq(ColumnRequest("a", Map.empty)), Map.empty, false))
    assert(parser.parsePlan("REFRESH BLOOM INDEX i") == RefreshBloomIndexCommand("i", full = false))
    assert(parser.parsePlan("refresh bloom index i incremental") == RefreshBloomIndexCommand("i", full = false))
    assert(parser.parsePlan("REFRESH BLOOM INDEX i FULL") == RefreshBloomIndexCommand("i", full = true))
    assert(parser.parsePlan("DROP BLOOM INDEX IF EXISTS i") == DropBloomIndexCommand("i", ifExists = true))
    assert(parser.parsePlan("SHOW BLOOM INDEXES") == ShowBloomIndexesCommand(None))
    assert(parser.parsePlan("SHOW BLOOM INDEXES ON t") == ShowBloomIndexesCommand(Some(SourceRef(Seq("t")))))
    assert(parser.parsePlan("DESC BLOOM INDEX i -- comment") == DescribeBloomIndexCommand("i"))
    assert(parser.parsePlan("/* hi */ DESCRIBE BLOOM INDEX `i`") == DescribeBloomIndexCommand("i"))
  }

  test("Databricks forms") {
    assert(parser.parsePlan("CREATE BLOOMFILTER INDEX ON TABLE t FOR COLUMNS (c OPTIONS (fpp = 0.1, numItems = 5000000))") ==
      CreateBloomFilterIndexCommand(SourceRef(Seq("t")), Seq(ColumnRequest("c", Map("fpp" -> "0.1", "numItems" -> "5000000"))), Map.empty))
    assert(parser.parsePlan("DROP BLOOMFILTER INDEX ON t") == DropBloomFilterIndexCommand(SourceRef(Seq("t")), None))
    assert(parser.parsePlan("DROP BLOOMFILTER INDEX ON TABLE t FOR COLUMNS (c, d)") ==
      DropBloomFilterIndexCommand(SourceRef(Seq("t")), Some(Seq("c", "d"))))
  }

  test("other statements go to Spark's parser, with Spark's errors") {
    assert(!parser.parsePlan("SELECT 1").isInstanceOf[CreateBloomIndexCommand])
    assert(parser.parsePlan("CREATE TABLE bloom (index INT) USING parquet") != null)
    val e = intercept[ParseException](parser.parsePlan("SELEC 1"))
    assert(e.getMessage.contains("SELEC"))
    // Our keywords stay usable as identifiers elsewhere.
    assert(parser.parsePlan("SELECT bloom, bloomfilter, indexes FROM t") != null)
  }

  test("mistakes in our statements are ParseExceptions saying what was expected") {
    val cases = Seq(
      "CREATE BLOOM INDEX i ON t FOR COLUMNS" -> "expected '('",
      "CREATE BLOOM INDEX i ON t FOR COLUMNS ()" -> "expected a column name",
      "CREATE BLOOM INDEX i ON t" -> "expected FOR",
      "CREATE BLOOM INDEX ON t FOR COLUMNS (a)" -> "expected ON",
      "CREATE BLOOM INDEX i ON t FOR COLUMNS (a) OPTIONS (fpp = )" -> "expected a value",
      "CREATE BLOOM INDEX i ON t FOR COLUMNS (a) OPTIONS (fpp = 1, fpp = 2)" -> "given twice",
      "CREATE BLOOM INDEX i ON t FOR COLUMNS (a) extra" -> "expected the end",
      "REFRESH BLOOM INDEX i SOMETIMES" -> "expected the end",
      "DROP BLOOM INDEX" -> "expected an index name",
      "SHOW BLOOM TABLES" -> "expected INDEXES",
      "DESCRIBE BLOOM i" -> "expected INDEX")
    for ((sql, expected) <- cases) {
      val e = intercept[ParseException](parser.parsePlan(sql))
      assert(e.getMessage.contains(expected), s"$sql: ${e.getMessage}")
      assert(e.getMessage.contains("PARSE_SYNTAX_ERROR"))
    }
  }
}
