package bloomindex.source

import java.nio.file.Files

import bloomindex.testing.TestSpark

import org.apache.spark.sql.SparkSession
import org.scalatest.funsuite.AnyFunSuite

/** The registry of source providers, and what the plain-file provider says of scans and writes. */
class ProvidersSuite extends AnyFunSuite {

  private lazy val spark: SparkSession = TestSpark.session

  test("the registry lists the providers in the services file's order, plain files last") {
    assert(SourceProviders.all.map(_.name) == Seq("delta", "iceberg", "files"))
    assert(SourceProviders.of(bloomindex.log.SourceSpec(None, "delta", Seq("/x"), Map.empty, Nil)).name == "delta")
    assert(SourceProviders.of(bloomindex.log.SourceSpec(None, "csv", Seq("/x"), Map.empty, Nil)).name == "files")
    assert(SourceProviders.forPath("iceberg").map(_.name).contains("iceberg"))
    assert(SourceProviders.forPath("parquet").map(_.name).contains("files") && SourceProviders.forPath("xml").isEmpty)
  }

  test("a scan of a folder of Parquet files is the file provider's, a catalog table by name and creation time") {
    val path = Files.createTempDirectory("bloomindex-src").resolve("p").toString
    spark.range(10).write.parquet(path)
    val scan = spark.read.parquet(path).queryExecution.analyzed.collectLeaves().flatMap(SourceProviders.describe).head
    assert(scan.provider.name == "files" && scan.format == "parquet" && scan.table.isEmpty && scan.listingMayBeStale)
    assert(scan.identity.roots == Set(SourceProviders.normalizeRoot(path)))
    spark.sql("DROP TABLE IF EXISTS providers_t")
    spark.range(10).write.saveAsTable("providers_t")
    try {
      val t = spark.table("providers_t").queryExecution.analyzed.collectLeaves().flatMap(SourceProviders.describe).head
      assert(t.table.exists(_.endsWith("default.providers_t")) && t.tableCreated.isDefined)
      assert(t.decoding(spark.sessionState.conf, "id").get.physical.contains(DecodingContext.TableCreated))
    } finally spark.sql("DROP TABLE providers_t")
  }

  test("writtenBy: an INSERT into a file source table names the table and its folder") {
    spark.sql("DROP TABLE IF EXISTS providers_w")
    spark.sql("CREATE TABLE providers_w (id BIGINT) USING parquet")
    try {
      // The command an INSERT plans (not run: CommandExecutionMode.SKIP).
      val parsed = spark.sessionState.sqlParser.parsePlan("INSERT INTO providers_w VALUES (1), (2)")
      val commands = spark.sessionState.executePlan(parsed, org.apache.spark.sql.execution.CommandExecutionMode.SKIP)
        .analyzed.collect { case c => c }
      val written = commands.flatMap(c => SourceProviders.all.flatMap(_.writtenBy(c)))
      assert(written.size == 1, commands)
      assert(written.head.provider == "files" && written.head.table.exists(_.endsWith("default.providers_w")))
      val location = spark.sessionState.catalog.getTableMetadata(
        org.apache.spark.sql.catalyst.TableIdentifier("providers_w")).location.getPath.stripSuffix("/")
      assert(written.head.roots == Set(location))
    } finally spark.sql("DROP TABLE providers_w")
  }

  test("writtenBySink: without Iceberg on the class path Iceberg's provider claims no sink, and never throws") {
    val iceberg = SourceProviders.all.find(_.name == "iceberg").get
    for (d <- Seq("FileSink[/x]", "DeltaSink[/x]", "MemorySink", "local.db.t", "/tmp/x", "file:/tmp/x", "",
        "org.apache.spark.sql.execution.streaming.ConsoleTable$@1a2b")) {
      assert(iceberg.writtenBySink(spark, d).isEmpty, d)
    }
    assert(SourceProviders.all.flatMap(_.writtenBySink(spark, "FileSink[/x/y]")).map(_.provider) == Seq("files"))
  }
}
