package bloomindex.sql

import bloomindex.actions.ColumnRequest
import bloomindex.source.SourceRef

import org.apache.spark.sql.catalyst.parser.{CatalystSqlParser, ParseException, ParserInterface}
import org.scalatest.funsuite.AnyFunSuite

/** The parser on its own: no Spark session needed. */
class BloomIndexSqlParserSuite extends AnyFunSuite {

  private val parser = BloomIndexSqlParser(CatalystSqlParser)

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

  test("text filters: USING TOKENS and USING NGRAMS (n), with options, beside an equality filter") {
    val plan = parser.parsePlan(
      """CREATE BLOOM INDEX logs_idx ON logs FOR COLUMNS (trace_id, message, message using tokens,
        |  url USING NGRAMS (3) OPTIONS (case = 'lower', fpp = 0.01), `using` USING ngrams(2))""".stripMargin)
    assert(plan == CreateBloomIndexCommand("logs_idx", SourceRef(Seq("logs")),
      Seq(ColumnRequest("trace_id", Map.empty), ColumnRequest("message", Map.empty),
        ColumnRequest("message", Map.empty, Some("tokens")),
        ColumnRequest("url", Map("case" -> "lower", "fpp" -> "0.01"), Some("ngrams(3)")),
        ColumnRequest("using", Map.empty, Some("ngrams(2)"))),
      Map.empty, false))
    // The Databricks form has no text filters.
    intercept[ParseException](parser.parsePlan("CREATE BLOOMFILTER INDEX ON TABLE t FOR COLUMNS (a USING TOKENS)"))
  }

  test("a path source, and the other statements") {
    assert(parser.parsePlan("CREATE BLOOM INDEX i ON parquet.`/data/t` FOR COLUMNS (a)") ==
      CreateBloomIndexCommand("i", SourceRef(Seq("parquet", "/data/t")), Seq(ColumnRequest("a", Map.empty)), Map.empty, false))
    assert(parser.parsePlan("REFRESH BLOOM INDEX i") == RefreshBloomIndexCommand("i", full = false))
    assert(parser.parsePlan("refresh bloom index i incremental") == RefreshBloomIndexCommand("i", full = false))
    assert(parser.parsePlan("REFRESH BLOOM INDEX i FULL") == RefreshBloomIndexCommand("i", full = true))
    assert(parser.parsePlan("DROP BLOOM INDEX IF EXISTS i") == DropBloomIndexCommand("i", ifExists = true))
    assert(parser.parsePlan("ALTER BLOOM INDEX i SET OPTIONS (refresh = 'manual')") ==
      AlterBloomIndexCommand("i", Map("refresh" -> "manual")))
    assert(parser.parsePlan("OPTIMIZE BLOOM INDEX i") == OptimizeBloomIndexCommand("i"))
    assert(parser.parsePlan("VACUUM BLOOM INDEX i") == VacuumBloomIndexCommand("i", None))
    assert(parser.parsePlan("vacuum bloom index i retain 0 hours;") == VacuumBloomIndexCommand("i", Some(0.0)))
    assert(parser.parsePlan("VACUUM BLOOM INDEX i RETAIN 1.5 HOURS") == VacuumBloomIndexCommand("i", Some(1.5)))
    assert(parser.parsePlan("SHOW BLOOM INDEXES") == ShowBloomIndexesCommand(None))
    assert(parser.parsePlan("SHOW BLOOM INDEXES ON t") == ShowBloomIndexesCommand(Some(SourceRef(Seq("t")))))
    assert(parser.parsePlan("DESC BLOOM INDEX i -- comment") == DescribeBloomIndexCommand("i"))
    assert(parser.parsePlan("/* hi */ DESCRIBE BLOOM INDEX `i`") == DescribeBloomIndexCommand("i"))
    assert(parser.parsePlan("DESCRIBE BLOOM INDEX EXTENDED i") == DescribeBloomIndexCommand("i", extended = true))
    // An index named `extended`: the word is its name when nothing follows it.
    assert(parser.parsePlan("DESCRIBE BLOOM INDEX extended") == DescribeBloomIndexCommand("extended"))
    assert(parser.parsePlan("DESC BLOOM INDEX extended `extended`") == DescribeBloomIndexCommand("extended", extended = true))
  }

  test("RECOMMEND BLOOM INDEXES and EXPLAIN BLOOM INDEX WHATIF (the advisor)") {
    assert(parser.parsePlan("recommend bloom indexes") == RecommendBloomIndexesCommand(None, None, None))
    assert(parser.parsePlan("RECOMMEND BLOOM INDEXES ON db.t FROM HISTORY BUDGET '64m';") ==
      RecommendBloomIndexesCommand(Some(SourceRef(Seq("db", "t"))), None, Some("64m")))
    assert(parser.parsePlan("RECOMMEND BLOOM INDICES ON parquet.`/d` BUDGET 1048576 FOR SELECT * FROM t WHERE a = 'x;y';") ==
      RecommendBloomIndexesCommand(Some(SourceRef(Seq("parquet", "/d"))), Some("SELECT * FROM t WHERE a = 'x;y'"), Some("1048576")))
    assert(parser.parsePlan("RECOMMEND BLOOM INDEXES BUDGET 2g") == RecommendBloomIndexesCommand(None, None, Some("2g")))
    assert(parser.parsePlan("EXPLAIN BLOOM INDEX WHATIF (a, `b c`) FOR SELECT 1") ==
      ExplainBloomIndexWhatIfCommand(Seq("a", "b c"), Map.empty, "SELECT 1"))
    assert(parser.parsePlan("explain bloom index whatif (a) options (fpp = 0.05) for SELECT 1") ==
      ExplainBloomIndexWhatIfCommand(Seq("a"), Map("fpp" -> "0.05"), "SELECT 1"))
    intercept[ParseException](parser.parsePlan("RECOMMEND BLOOM INDEXES FOR"))
    intercept[ParseException](parser.parsePlan("RECOMMEND BLOOM INDEXES FROM HISTORY extra"))
    intercept[ParseException](parser.parsePlan("RECOMMEND BLOOM INDEXES BUDGET"))
    intercept[ParseException](parser.parsePlan("EXPLAIN BLOOM INDEX WHATIF () FOR SELECT 1"))
    intercept[ParseException](parser.parsePlan("EXPLAIN BLOOM INDEX WHATIF (a) SELECT 1"))
    // A budget that is not a size is the command's error (a parser throws ParseExceptions only).
    val e = intercept[org.apache.spark.sql.AnalysisException](RecommendBloomIndexesCommand.parseBudget("lots"))
    assert(e.getCondition == "BLOOM_INDEX_INVALID_BUDGET")
    assert(RecommendBloomIndexesCommand.parseBudget("64m") == 64L * 1024 * 1024)
    intercept[org.apache.spark.sql.AnalysisException](RecommendBloomIndexesCommand.parseBudget("0"))
  }

  test("EXPLAIN BLOOM INDEX FOR a query, and CREATE ... ON VIEW (the Spark Connect client's forms)") {
    assert(parser.parsePlan("explain bloom index for SELECT * FROM `v 1` WHERE a = 'x;y' ;") ==
      ExplainBloomIndexCommand("SELECT * FROM `v 1` WHERE a = 'x;y'"))
    assert(parser.parsePlan("CREATE BLOOM INDEX i ON VIEW `tmp v` FOR COLUMNS (a)") ==
      CreateBloomIndexCommand("i", SourceRef(Seq("tmp v")), Seq(ColumnRequest("a", Map.empty)), Map.empty, false, view = true))
    assert(parser.parsePlan("CREATE BLOOM INDEX i ON LOCATION '/d/it\\'s' USING Parquet FOR COLUMNS (a)") ==
      CreateBloomIndexCommand("i", SourceRef(Seq("/d/it's")), Seq(ColumnRequest("a", Map.empty)), Map.empty, false,
        format = Some("Parquet")))
    assert(parser.parsePlan("CREATE BLOOM INDEX i ON location.t FOR COLUMNS (a)") ==
      CreateBloomIndexCommand("i", SourceRef(Seq("location", "t")), Seq(ColumnRequest("a", Map.empty)), Map.empty, false))
    // A table named `view` is still a table.
    assert(parser.parsePlan("CREATE BLOOM INDEX i ON view FOR COLUMNS (a)") ==
      CreateBloomIndexCommand("i", SourceRef(Seq("view")), Seq(ColumnRequest("a", Map.empty)), Map.empty, false))
    assert(parser.parsePlan("CREATE BLOOM INDEX i ON view.t FOR COLUMNS (a)") ==
      CreateBloomIndexCommand("i", SourceRef(Seq("view", "t")), Seq(ColumnRequest("a", Map.empty)), Map.empty, false))
    val e = intercept[ParseException](parser.parsePlan("EXPLAIN BLOOM INDEX FOR"))
    assert(e.getMessage.contains("expected a query"))
    intercept[ParseException](parser.parsePlan("EXPLAIN BLOOM INDEXES FOR SELECT 1"))
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

  test("Spark's statements on a table or database named bloom stay Spark's") {
    def ours(sql: String): Boolean = BloomIndexSqlParser.parseOurs(sql).isDefined
    val spark = new org.apache.spark.sql.execution.SparkSqlParser()
    val withSpark = BloomIndexSqlParser(spark)
    // DESCRIBE a table `bloom`, a column `i` of it, a table of database `bloom`: Spark's plans.
    for (sql <- Seq("DESCRIBE bloom", "DESC bloom", "DESC bloom.t", "DESCRIBE bloom i", "describe bloom extended")) {
      assert(!ours(sql), sql)
      // The same plan but for its output attributes' ids.
      assert(withSpark.parsePlan(sql).canonicalized == spark.parsePlan(sql).canonicalized, sql)
    }
    // Delta's VACUUM and OPTIMIZE of a table `bloom` (not Spark's own statements): the delegate's
    // answer, here Spark's parse error, never ours.
    for (sql <- Seq("VACUUM bloom RETAIN 168 HOURS", "OPTIMIZE bloom", "OPTIMIZE bloom.t ZORDER BY (a)")) {
      assert(!ours(sql), sql)
      val e = intercept[ParseException](parser.parsePlan(sql))
      assert(!e.getMessage.contains("expected INDEX"), s"$sql: ${e.getMessage}")
    }
    assert(parser.parsePlan("DESCRIBE BLOOM INDEX i") == DescribeBloomIndexCommand("i", extended = false))
    assert(parser.parsePlan("optimize bloom index i") == OptimizeBloomIndexCommand("i"))
  }

  test("comments are read as Spark reads them: /* */ nests, a backslash carries -- on") {
    // Spark sees one comment, then SELECT 1: nothing of ours runs.
    assert(BloomIndexSqlParser.parseOurs("/* /* */ DROP BLOOM INDEX prod; -- */ SELECT 1").isEmpty)
    assert(BloomIndexSqlParser.parseOurs("-- a note \\\nDROP BLOOM INDEX prod\nSELECT 1").isEmpty)
    assert(parser.parsePlan("/* a /* nested */ note */ DROP BLOOM INDEX i -- done") == DropBloomIndexCommand("i", ifExists = false))
    intercept[ParseException](parser.parsePlan("/* /* */ DROP BLOOM INDEX i"))
  }

  test("string values are unescaped as Spark unescapes string literals") {
    def separators(literal: String): String = {
      val plan = parser.parsePlan(s"CREATE BLOOM INDEX i ON t FOR COLUMNS (m USING TOKENS OPTIONS (separators = $literal))")
      plan.asInstanceOf[CreateBloomIndexCommand].columns.head.options("separators")
    }
    val cases = Seq(
      """' \t,'""" -> " \t,",
      """'\n\r\b\0\Z'""" -> "\n\r\b\u0000\u001A",
      "'\\u00A0\\u00a0x'" -> "\u00A0\u00A0x",
      "'\\U0001F600'" -> new String(Character.toChars(0x1F600)),
      """'\101\08\0101'""" -> "A\u00008\b1",  // three octal digits, the first 0 or 1; else \0 is NUL
      """'\\ \' \" \x'""" -> "\\ ' \" x",
      """'50\% \_'""" -> "50\\% \\_",  // kept with their backslash, as Spark (and MySQL) keep them
      """"a\tb"""" -> "a\tb",
      "r'\\t\\u00A0'" -> "\\t\\u00A0",  // raw strings: no escapes
      """R"\n"""" -> "\\n",
      "'\\u12'" -> "u12")  // not four hex digits: the u as it is
    for ((literal, expected) <- cases) {
      assert(separators(literal) == expected, literal)
      // The same value as Spark's parser gives the same literal.
      val spark = CatalystSqlParser.parseExpression(literal).eval().toString
      assert(spark == expected, s"$literal: Spark reads ${spark.map(_.toInt)}")
    }
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
      "CREATE BLOOM INDEX i ON t FOR COLUMNS (a USING WORDS)" -> "expected TOKENS or NGRAMS (n)",
      "CREATE BLOOM INDEX i ON t FOR COLUMNS (a USING NGRAMS)" -> "expected '('",
      "CREATE BLOOM INDEX i ON t FOR COLUMNS (a USING NGRAMS (x))" -> "expected the n of NGRAMS (n)",
      "CREATE BLOOM INDEX i ON t FOR COLUMNS (a USING NGRAMS (3)" -> "expected ')'",
      "REFRESH BLOOM INDEX i SOMETIMES" -> "expected the end",
      "ALTER BLOOM INDEX i OPTIONS (refresh = 'manual')" -> "expected SET",
      "ALTER BLOOM INDEX i SET (refresh = 'manual')" -> "expected OPTIONS",
      "OPTIMIZE BLOOM INDEX" -> "expected an index name",
      "OPTIMIZE BLOOM INDEX i FULL" -> "expected the end",
      "VACUUM BLOOM INDEX i RETAIN -1 HOURS" -> "expected a number of hours",
      "VACUUM BLOOM INDEX i RETAIN 2 DAYS" -> "expected HOURS",
      "VACUUM BLOOM INDEX i RETAIN" -> "expected a number of hours",
      "DROP BLOOM INDEX" -> "expected an index name",
      "SHOW BLOOM TABLES" -> "expected INDEXES",
      "DESCRIBE BLOOM INDEX" -> "expected an index name")
    for ((sql, expected) <- cases) {
      val e = intercept[ParseException](parser.parsePlan(sql))
      assert(e.getMessage.contains(expected), s"$sql: ${e.getMessage}")
      assert(e.getMessage.contains("PARSE_SYNTAX_ERROR"))
    }
  }

  test("fuzz: mutated statements are parsed or refused with a ParseException, quickly") {
    val outcomes = ParserFuzz.statements(seed = 20261121L, count = 4000).map { sql =>
      val t0 = System.nanoTime()
      val outcome = ParserFuzz.parseWithin(parser, sql, timeoutMs = 5000)
      assert((System.nanoTime() - t0) / 1e9 < 5, s"slow: $sql")
      outcome match {
        case Right(_) | Left(_: ParseException) | Left(_: org.apache.spark.sql.AnalysisException) =>
        case Left(other) => fail(s"${other.getClass.getName} for ${sql.take(300)}", other)
      }
      outcome.isRight
    }
    // The generator must reach both outcomes, or it tests nothing.
    assert(outcomes.count(identity) > 50 && outcomes.count(!_) > 2000, outcomes.count(identity))
  }
}

/** Seeded statements for the parser fuzz: our statements, mutated token by token. */
object ParserFuzz {

  val Valid: Seq[String] = Seq(
    "CREATE BLOOM INDEX IF NOT EXISTS i ON db.t FOR COLUMNS (a OPTIONS (fpp = 0.01, ndv = 100), `b c`) OPTIONS (global = true)",
    "CREATE BLOOM INDEX i ON parquet.`/data/t` FOR COLUMNS (a)",
    "REFRESH BLOOM INDEX i FULL",
    "REFRESH BLOOM INDEX i INCREMENTAL",
    "ALTER BLOOM INDEX i SET OPTIONS (refresh = 'background')",
    "DROP BLOOM INDEX IF EXISTS i",
    "OPTIMIZE BLOOM INDEX i",
    "VACUUM BLOOM INDEX i RETAIN 12 HOURS",
    "SHOW BLOOM INDEXES ON t",
    "DESCRIBE BLOOM INDEX `i`",
    "CREATE BLOOMFILTER INDEX ON TABLE t FOR COLUMNS (c OPTIONS (fpp = 0.1, numItems = 5000000))",
    "DROP BLOOMFILTER INDEX ON TABLE t FOR COLUMNS (c, d)")

  private val Junk = Seq("(", ")", "'", "\"", "`", ",", "=", ";", ".", "--", "/*", "*/", "OPTIONS", "INDEX",
    "BLOOM", "ON", "FOR", "COLUMNS", "IF", "NOT", "EXISTS", "FULL", "99999999999999999999999999999", "1e999999",
    "-0.0", "NaN", "\u0000", "\u202e", "\ud83d\ude00", "é", "\\", "../x", "/abs", "file:/x", "SELECT")

  def tokens(sql: String): Vector[String] = sql.split("(?<=[ (),=])|(?=[ (),=])").filter(_.nonEmpty).toVector

  def statements(seed: Long, count: Int): Seq[String] = {
    val rng = new scala.util.Random(seed)
    Seq.fill(count) {
      var t = tokens(Valid(rng.nextInt(Valid.size)))
      for (_ <- 0 to rng.nextInt(4)) {
        val i = rng.nextInt(t.size)
        t = rng.nextInt(7) match {
          case 0 => t.patch(i, Nil, 1)
          case 1 => t.patch(i, Seq(" ", Junk(rng.nextInt(Junk.size)), " "), 0)
          case 2 => val j = rng.nextInt(t.size); t.updated(i, t(j)).updated(j, t(i))
          case 3 => t.patch(i, Seq(new String(Array.fill(1 + rng.nextInt(5))(rng.nextInt(0x2FFFF)).flatMap(Character.toChars))), 0)
          case 4 => t.patch(i, Seq("(" * 500, ")" * rng.nextInt(501)), 0)
          case 5 => t.patch(i, Seq("9" * (1 + rng.nextInt(400))), 1)
          case _ => t.patch(i, Seq(t(i).take(rng.nextInt(t(i).length + 1))), 1)
        }
        if (t.isEmpty) t = Vector("DROP")
      }
      t.mkString
    }
  }

  /** Parses on another thread: a hang is a failed test, not a stuck build. */
  def parseWithin(parser: ParserInterface, sql: String, timeoutMs: Long): Either[Throwable, Any] = {
    val f = java.util.concurrent.CompletableFuture.supplyAsync(() => scala.util.Try(parser.parsePlan(sql)))
    f.get(timeoutMs, java.util.concurrent.TimeUnit.MILLISECONDS).toEither
  }
}
