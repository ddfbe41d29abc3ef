package bloomindex.source

import java.nio.file.Files

import bloomindex.testing.{TempDirs, TestSpark}

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.types.StructType
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
    val path = TempDirs.create("bloomindex-src").resolve("p").toString
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

  test("CREATE and REFRESH of an index on a cached catalog table list its files anew and keep the table's cache") {
    spark.conf.set("spark.bloomindex.root", TempDirs.create("bloomindex-root").toUri.toString)
    spark.sql("DROP TABLE IF EXISTS providers_cached")
    spark.range(0, 40, 1, 4).write.saveAsTable("providers_cached")
    def loaded: Boolean = spark.sharedState.cacheManager.lookupCachedData(
      spark.table("providers_cached").asInstanceOf[org.apache.spark.sql.classic.Dataset[_]])
      .exists(_.cachedRepresentation.cacheBuilder.isCachedColumnBuffersLoaded)
    try {
      spark.sql("CACHE TABLE providers_cached")
      assert(spark.table("providers_cached").count() == 40 && loaded)
      spark.sql("CREATE BLOOM INDEX providers_cached_ix ON providers_cached FOR COLUMNS (id)")
      assert(loaded)
      // A file added beside this session (no write of it tells its caches): the refresh lists it.
      val location = new java.io.File(spark.sessionState.catalog.getTableMetadata(
        org.apache.spark.sql.catalyst.TableIdentifier("providers_cached")).location)
      val part = location.listFiles().filter(_.getName.endsWith(".parquet")).minBy(_.getName)
      Files.copy(part.toPath, new java.io.File(location, "part-99999-copy.parquet").toPath)
      spark.sql("REFRESH BLOOM INDEX providers_cached_ix")
      assert(new bloomindex.log.IndexRoot(spark).log("providers_cached_ix").lastActive().get.data.get.indexedFiles == 5)
      assert(loaded)
    } finally {
      spark.sql("DROP BLOOM INDEX IF EXISTS providers_cached_ix")
      spark.sql("UNCACHE TABLE IF EXISTS providers_cached")
      spark.sql("DROP TABLE IF EXISTS providers_cached")
      spark.conf.unset("spark.bloomindex.root")
    }
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

  test("a Parquet folder read without a schema: the relation Spark's read makes, inferred from the one footer Spark's reads") {
    import org.apache.hadoop.fs.{Path => HPath}
    val root = TempDirs.create("bloomindex-infer")
    def write(df: org.apache.spark.sql.DataFrame, dir: java.nio.file.Path, name: String): Unit = {
      val tmp = TempDirs.create("bloomindex-infer-w").resolve("o").toString
      df.coalesce(1).write.parquet(tmp)
      val part = new java.io.File(tmp).listFiles().find(_.getName.endsWith(".parquet")).get
      Files.createDirectories(dir)
      Files.copy(part.toPath, dir.resolve(name))
    }
    def spec(path: java.nio.file.Path, options: Map[String, String] = Map.empty) =
      bloomindex.log.SourceSpec(None, "parquet", Seq(path.toString), options, Nil)
    def same(path: java.nio.file.Path, options: Map[String, String] = Map.empty): StructType = {
      val ours = files.FilesProvider.parquetFrame(spark, spec(path, options))
      assert(ours.isDefined, path)
      val theirs = spark.read.options(options).parquet(path.toString)
      val (a, b) = (SourceResolver.relation(ours.get, "ours"), SourceResolver.relation(theirs, "Spark's"))
      assert(a.schema == b.schema && a.dataSchema == b.dataSchema && a.partitionSchema == b.partitionSchema)
      assert(a.options == b.options && a.fileFormat.getClass == b.fileFormat.getClass)
      assert(ours.get.inputFiles.sorted.toSeq == theirs.inputFiles.sorted.toSeq)
      assert(ours.get.collect().map(_.toString).sorted.toSeq == theirs.collect().map(_.toString).sorted.toSeq)
      a.schema
    }
    val narrow = spark.range(3).selectExpr("id")
    val wide = spark.range(3).selectExpr("id", "CAST(id AS STRING) AS s")
    // Files of two schemas: the first by its path's string decides, for Spark and for us.
    val flat = root.resolve("flat")
    write(narrow, flat, "b.parquet")
    write(wide, flat, "c.parquet")
    assert(same(flat).fieldNames.toSeq == Seq("id"))
    write(wide, flat, "a.parquet")
    assert(same(flat).fieldNames.toSeq == Seq("id", "s"))
    // Partitions, one of them also a column of the files (Spark's relation merges the two).
    val parted = root.resolve("parted")
    write(spark.range(3).selectExpr("id", "CAST(7 AS INT) AS p"), parted.resolve("p=1"), "x.parquet")
    write(narrow, parted.resolve("p=2"), "y.parquet")
    val schema = same(parted)
    assert(schema.fieldNames.toSeq == Seq("id", "p"), schema)
    // Read recursively: no partition columns, the files of every folder.
    assert(same(parted, Map("recursiveFileLookup" -> "true")).fieldNames.toSeq == Seq("id", "p"))
    // A _metadata file is read before any data file, a _common_metadata one before both.
    val summaries = root.resolve("summaries")
    write(narrow, summaries, "a.parquet")
    write(spark.range(1).selectExpr("CAST(id AS STRING) AS t", "id"), summaries, "_metadata")
    assert(same(summaries).fieldNames.toSeq == Seq("t", "id"))
    write(spark.range(1).selectExpr("id", "id AS u"), summaries, "_common_metadata")
    assert(same(summaries).fieldNames.toSeq == Seq("id", "u"))
    val picked = files.FilesProvider.parquetSchemaFile(Seq("z/_metadata", "a/_common_metadata", "b/_common_metadata", "a/a.parquet")
      .map(p => new org.apache.hadoop.fs.FileStatus(1, false, 1, 1, 1, new HPath("/r/" + p))))
    assert(picked.map(_.getPath.toString).contains("/r/a/_common_metadata"))
    // By the string, as Spark sorts: "a-b" before "a/b" ('-' < '/'), unlike a path's segments.
    val order = files.FilesProvider.parquetSchemaFile(Seq("/r/a/b.parquet", "/r/a-b.parquet")
      .map(p => new org.apache.hadoop.fs.FileStatus(1, false, 1, 1, 1, new HPath(p))))
    assert(order.map(_.getPath.toString).contains("/r/a-b.parquet"))
    // Merging schemas reads every footer: left to Spark. So are formats other than Parquet, and a folder with no file.
    assert(files.FilesProvider.parquetFrame(spark, spec(flat, Map("mergeSchema" -> "true"))).isEmpty)
    assert(files.FilesProvider.parquetFrame(spark, spec(flat).copy(format = "orc")).isEmpty)
    assert(files.FilesProvider.parquetFrame(spark, spec(Files.createDirectories(root.resolve("empty")))).isEmpty)
    // An option Spark refuses is left to Spark's read, which reports a missing folder first.
    assert(files.FilesProvider.parquetFrame(spark, spec(root.resolve("missing"), Map("compression" -> "nope"))).isEmpty)
    // A file sink's folder is listed from its log by Spark (another file index, its schema kept as inferred): left to Spark.
    val sink = root.resolve("sink")
    spark.readStream.schema(narrow.schema).parquet(flat.toString).writeStream.format("parquet")
      .option("checkpointLocation", root.resolve("sink-checkpoint").toString)
      .trigger(org.apache.spark.sql.streaming.Trigger.AvailableNow()).start(sink.toString).awaitTermination()
    assert(spark.read.parquet(sink.toString).inputFiles.nonEmpty)
    assert(files.FilesProvider.parquetFrame(spark, spec(sink)).isEmpty)
    // A name twice (under the session's case rule): Spark's read refuses it, so it is left to it.
    val twice = root.resolve("twice")
    spark.conf.set("spark.sql.caseSensitive", "true")
    try write(spark.range(1).selectExpr("id", "id AS ID"), twice, "a.parquet") finally spark.conf.unset("spark.sql.caseSensitive")
    assert(files.FilesProvider.parquetFrame(spark, spec(twice)).isEmpty)
  }
}
