package bloomindex.errors

import java.nio.file.{Files, Path, Paths}

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import bloomindex.source.delta.DeltaErrors
import bloomindex.source.iceberg.IcebergErrors

import org.apache.spark.sql.AnalysisException
import org.apache.spark.sql.catalyst.trees.Origin

/** The error conditions file, and the conditions the code uses. */
class BloomIndexErrorsSuite extends AnyFunSuite {

  private val known = BloomIndexErrors.conditions

  test("every condition has a message and a 5-character SQLSTATE") {
    assert(known.size >= 10, known.keySet)
    known.values.foreach { c =>
      assert(c.name.matches("[A-Z][A-Z0-9_]*"), c.name)
      assert(c.messageTemplate.trim.nonEmpty, c.name)
      assert(c.sqlState.matches("[0-9A-Z]{5}"), s"${c.name}: SQLSTATE '${c.sqlState}'")
    }
  }

  private def mainSources: Seq[Path] = Seq("jvm/src/main/scala", "jvm/src/main/java").map(Paths.get(_))
    .filter(Files.isDirectory(_)).flatMap(r => Files.walk(r).iterator().asScala.filter(Files.isRegularFile(_)).toSeq)

  test("every condition the code names exists in the file, and every condition of the file is used") {
    val Named = "\"(BLOOM_[A-Z0-9_]+)\"".r
    val used = mainSources.flatMap { p =>
      Named.findAllMatchIn(new String(Files.readAllBytes(p), "UTF-8")).map(_.group(1) -> p)
    }
    assert(used.nonEmpty)
    val unknown = used.filterNot { case (c, _) => known.contains(c) }
    assert(unknown.isEmpty, s"conditions missing from ${BloomIndexErrors.ConditionsResource}: $unknown")
    assert((known.keySet -- used.map(_._1)).isEmpty, "conditions nothing raises")
  }

  private def check(e: AnalysisException, condition: String, text: String): Unit = {
    assert(e.getCondition == condition)
    assert(e.getSqlState == known(condition).sqlState)
    assert(e.getMessage == s"[$condition] $text SQLSTATE: ${e.getSqlState}", e.getMessage)
    // Spark attaches a SQL position with withPosition: condition, state and message stay.
    val positioned = e.withPosition(Origin(Some(1), Some(4)))
    assert(positioned.getCondition == condition && positioned.getSqlState == e.getSqlState)
    assert(positioned.getMessage == s"${e.getMessage}; line 1 pos 4")
    assert(positioned.context.isEmpty, "no query context: PySpark could not convert it")
  }

  test("messages keep their wording, with every parameter filled in") {
    import BloomIndexErrors._
    check(notFound("ix"), "BLOOM_INDEX_NOT_FOUND", "Bloom index 'ix' does not exist")
    check(alreadyExists("ix"), "BLOOM_INDEX_ALREADY_EXISTS",
      "Bloom index 'ix' already exists; use IF NOT EXISTS, or DROP BLOOM INDEX it first")
    check(mightContainWrongNumArgs("bloom_might_contain", 2), "BLOOM_MIGHT_CONTAIN_WRONG_NUM_ARGS",
      "bloom_might_contain takes 3 arguments ('<index>', '<column>', expr), or 4 with allow_stale last, got 2")
    // Parameter values are not templates: '<x>' and '$' in them stay as they are.
    check(pathNotFound("/a/<indexName>/$x"), "BLOOM_INDEX_PATH_NOT_FOUND", "Path does not exist: /a/<indexName>/$x")
    check(unsupportedColumnType("m", "MAP<STRING, INT>", "maps cannot be hashed"), "BLOOM_INDEX_UNSUPPORTED_COLUMN_TYPE",
      "Column 'm' of type MAP<STRING, INT> cannot be indexed: maps cannot be hashed")
    val conflict = new ConcurrentBloomIndexUpdateException("ix", 3, "REFRESH")
    check(conflict, "BLOOM_INDEX_CONCURRENT_UPDATE", "Bloom index 'ix': another command committed log version 3 " +
      "first (REFRESH lost the race); nothing was changed by this one, retry it")
    assert(conflict.getSqlState == "40001")
  }

  test("every builder fills in every parameter of its template") {
    import BloomIndexErrors._
    val all: Seq[AnalysisException] = Seq(notFound("n"), commandInProgress("n", "REFRESH FULL", 2, "ALTER BLOOM INDEX"), alreadyExists("n"), invalidName("a/b"),
      unsafeLocation("n", "/r/n", "spark.bloomindex.root", "/r"), damaged("n", "version 1 has no data"),
      newerFormat("n", 7, "format version 7 is not supported (this build reads 6): written by a newer bloomindex"),
      columnNotFound("n", "c"), notGlobal("n"), stale("n", "c", 1, 2, "t", 3), decodingContextChanged("n", "c", "t", "why"),
      incrementalRefreshContextChanged("n", "why", "t"), noSource("n"), noColumns(), sourceColumnNotFound("c", "t", Seq("a", "b")),
      duplicateColumn("c"), partitionColumn("c", "t"), corruptRecordColumn("c", "t"), xmlWildcardColumn("c", "t"), unsupportedColumnType("c", "MAP<INT, INT>", "why"),
      unknownOption("o", "index", Seq("fpp", "ndv")), invalidOptionValue("fpp", "2", "must be a number in (0, 1)"),
      invalidBooleanOption("global", "yes"), fppUnreachable(1e-30, "classic", "why"),
      encryptedColumns("n", "c", "t", "why", "allow_unencrypted_index"), sourceNotFound("t"), pathNotFound("/p"),
      unsupportedFormat("avro", Seq("parquet")), unsupportedFileFormat("x.Y"), unsupportedSource("t"),
      multipleRelations("t"), sourceChanged("t"), orphaned("n", "t"), sourceColumnGone("c", "n", "t", Seq("a")),
      DeltaErrors.unavailable("t"), DeltaErrors.notDeltaTable("/p"), DeltaErrors.rootPaths("t", 2),
      DeltaErrors.logUnreadable("t", new RuntimeException("boom")), DeltaErrors.columnMapping("t", "name"),
      filterIndexAlreadyExists("c", "t", "n"), filterIndexNotFound("t"), filterIndexMultiColumn("n", Seq("a", "b")),
      mightContainWrongNumArgs("f", 1), mightContainInvalidArgument("f", "why"),
      mightContainKeyTypeMismatch("f", "k", "n", "c", "why"), invalidConf("k", "is empty"),
      unsupportedSparkVersion("3.5.4", "4.1.x to 4.3.x"), new ConcurrentBloomIndexUpdateException("n", 1, "CREATE"),
      IcebergErrors.notIndexable("t", "why"), IcebergErrors.columnType("c", "t", "uuid"), IcebergErrors.initialDefault("c", "t"), IcebergErrors.fileFormat("t", "ORC", "/p"),
      IcebergErrors.unavailable("t"), sourceColumnTypeChanged("c", "n", "t", "INT", "BIGINT"), historyArguments("f", 1),
      invalidBudget("lots"), whatIfColumnNotFound("c", "t"), notAQuery("EXPLAIN BLOOM INDEX FOR", "DropTable"),
      joinFilterOutdated("t", "why"))
    assert(all.map(_.getCondition).toSet == known.keySet, "a builder per condition")
    all.foreach { e =>
      val template = known(e.getCondition).messageTemplate
      val params = "<([a-zA-Z]+)>".r.findAllMatchIn(template).map(_.group(1)).toSet
      assert(params == e.getMessageParameters.asScala.keySet, e.getCondition)
    }
  }
}
