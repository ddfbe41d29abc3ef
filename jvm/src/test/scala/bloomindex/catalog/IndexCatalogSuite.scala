package bloomindex.catalog

import java.io.File
import java.nio.file.Files

import bloomindex.advisor.ScannedSource
import bloomindex.log.SourceSpec
import bloomindex.source.{ScanSource, SourceIdentity, SourceProviders, SourceRef}
import bloomindex.testing.{SmallSource, TempDirs, TestSpark}

import org.apache.hadoop.fs.FileStatus
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.plans.logical.Filter
import org.scalatest.BeforeAndAfterEach
import org.scalatest.funsuite.AnyFunSuite

/**
 * The index catalog's decisions on a small source (four Parquet files, file k holding ids
 * k*100 to k*100+99), one index over it: which files a condition skips, and why an index does
 * not answer when the source differs, the scan decodes otherwise, a file changed, or a column
 * is missing.
 */
class IndexCatalogSuite extends AnyFunSuite with BeforeAndAfterEach {

  private lazy val spark: SparkSession = TestSpark.session
  private var path: String = _

  override def beforeEach(): Unit = {
    path = SmallSource.create(spark, "id", "s")
  }

  private def frame: DataFrame = spark.read.parquet(path)

  /** The scan of `df` as the catalog sees it. */
  private def scanOf(df: DataFrame): ScanSource =
    df.queryExecution.analyzed.collectLeaves().flatMap(SourceProviders.describe).head

  /** The analyzed condition of `df.where(sql)`, on the scan's own attributes. */
  private def condition(sql: String): Expression =
    frame.where(sql).queryExecution.analyzed.collectFirst { case Filter(c, _) => c }.get

  private def decide(sql: String, scan: ScanSource = scanOf(frame), files: Option[Seq[FileStatus]] = None): Option[Decision] =
    new IndexCatalog(spark).decide(condition(sql), scan, files.getOrElse(scan.allFiles()))

  test("same source: a point query skips the three files that cannot hold the value") {
    val d = decide("id = 150L").get
    assert(d.info.index == "ev" && d.info.filesTotal == 4 && d.info.filesKept == 1, d.info)
    assert(d.skipped.size == 3 && d.info.bytesSkipped > 0)
    // Every file that holds a matching row is kept.
    val holding = frame.where("id = 150L").inputFiles.toSet
    assert(holding.size == 1 && !d.skipped.exists(s => holding.exists(_.endsWith(new File(s).getName))))
    // IN over two files keeps both.
    assert(decide("id IN (5L, 305L)").get.info.filesKept == 2)
  }

  test("a late load of an older index version serves its caller and keeps the newer version's columns; a newer load drops the older") {
    val bi = bloomindex.api.BloomIndex(spark)
    val log = new bloomindex.log.IndexRoot(spark).log("ev")
    def version(): bloomindex.log.LogEntry = log.latest().get
    def append(from: Long): Unit = {
      spark.range(from, from + 100, 1, 1).selectExpr("id", "concat('s', id) AS s", "id % 3 AS amount")
        .write.mode("append").parquet(path)
      bi.refresh("ev")
    }
    val v1 = version()
    append(1000)
    val v2 = version()
    assert(v2.version > v1.version)
    IndexCache.clear()
    assert(decide("id = 1050L").get.info.filesKept == 1)
    val current = IndexCache.heldColumns(log.indexDir, v2.version)
    assert(current > 0)
    // A read of the older version that ends late (a query that stopped waiting for it): its
    // caller gets the column, the current version's columns stay loaded, and it is not kept.
    assert(IndexCache.column(spark, log, v1, 0).numFiles == 4)
    assert(IndexCache.heldColumns(log.indexDir, v2.version) == current)
    assert(IndexCache.heldColumns(log.indexDir, v1.version) == 0)
    // A newer version loaded drops the older one: nothing grows with the versions seen.
    append(2000)
    val v3 = version()
    assert(decide("id = 2050L").get.info.filesKept == 1)
    assert(IndexCache.heldColumns(log.indexDir, v3.version) > 0)
    assert(IndexCache.heldColumns(log.indexDir, v2.version) == 0)
  }

  test("a catalog asked twice for one scan's indexes looks for them once (Iceberg asks before planning its files, then decides)") {
    val scan = scanOf(frame)
    val catalog = new IndexCatalog(spark)
    assert(catalog.viewsFor(scan).map(_.name) == Seq("ev"))
    bloomindex.api.BloomIndex(spark).drop("ev")
    // The same scan: what the catalog found, not looked for again.
    assert(catalog.viewsFor(scan).map(_.name) == Seq("ev"))
    // Its data went with the drop: the decision skips nothing (an index it cannot read never prunes).
    assert(catalog.decide(condition("id = 150L"), scan, scan.allFiles()).forall(_.skipped.isEmpty))
    // Another scan, or another catalog (the next query's): looked for again.
    assert(catalog.viewsFor(scanOf(frame)).isEmpty)
    assert(new IndexCatalog(spark).viewsFor(scan).isEmpty)
  }

  test("another source: an index over other folders does not answer") {
    val other = TempDirs.create("bloomindex-other").resolve("events").toString
    spark.range(0, 400, 1, 4).selectExpr("id", "concat('s', id) AS s", "id % 3 AS amount").write.parquet(other)
    val scan = scanOf(spark.read.parquet(other))
    assert(new IndexCatalog(spark).viewsFor(scan).isEmpty)
    assert(decide("id = 150L", scan).isEmpty)
  }

  test("the one matcher: tables by name, folders by path (also a read of more folders, or a table over them)") {
    val files = SourceProviders.all.last
    val byPath = SourceSpec(None, "parquet", Seq("file:/data/a"), Map.empty, Nil)
    val byTable = SourceSpec(Some("spark_catalog.default.t"), "parquet", Seq("file:/data/a"), Map.empty, Nil)
    def target(table: Option[String], roots: String*) = SourceIdentity(files.name, table, roots.toSet)
    assert(SourceProviders.sameSource(byPath, target(None, "/data/a")))
    assert(SourceProviders.sameSource(byPath, target(None, "/data/a", "/data/b")))
    assert(!SourceProviders.sameSource(byPath, target(None, "/data/b")))
    assert(SourceProviders.sameSource(byPath, target(Some("spark_catalog.default.t"), "/data/a")))
    assert(!SourceProviders.sameSource(byPath, target(Some("spark_catalog.default.t"), "/data/a", "/data/b")))
    assert(SourceProviders.sameSource(byTable, target(Some("spark_catalog.default.t"), "/elsewhere")))
    assert(SourceProviders.sameSource(byTable, target(Some("default.t"), "/data/a")))
    assert(!SourceProviders.sameSource(byTable, target(Some("default.u"), "/data/a")))
    assert(!SourceProviders.sameSource(byTable, target(None, "/data/a")))
    // Reads by path inside the index's folder (a partition, a glob's folders, one file) ...
    assert(SourceProviders.sameSource(byPath, target(None, "/data/a/p=1")))
    assert(SourceProviders.sameSource(byPath, target(None, "/data/a/p=1/part-0.parquet", "/data/c")))
    // ... but not a folder whose name only starts with it, its parent, or a catalog table inside it.
    assert(!SourceProviders.sameSource(byPath, target(None, "/data/ab/p=1")))
    assert(!SourceProviders.sameSource(byPath, target(None, "/data")))
    assert(!SourceProviders.sameSource(byPath, target(Some("spark_catalog.default.t"), "/data/a/p=1")))
    // ... nor what a listing of the folder hides, nor anything under an index of a file system's root.
    assert(!SourceProviders.sameSource(byPath, target(None, "/data/a/_temporary/0")))
    assert(!SourceProviders.sameSource(byPath, target(None, "/data/a/p=1/.staging")))
    assert(SourceProviders.sameSource(byPath, target(None, "/data/a/_p=1")))
    assert(!SourceProviders.sameSource(byPath, target(None, "/data/a/p=1/part-0.parquet._COPYING_")))
    assert(!SourceProviders.sameSource(SourceSpec(None, "parquet", Seq("s3a://bucket/"), Map.empty, Nil), target(None, "/x")))
    // Statements naming a source and the advisor take an index's own source only.
    assert(SourceProviders.ownSource(byPath, target(None, "/data/a")) && !SourceProviders.ownSource(byPath, target(None, "/data/a/p=1")))
    // Another provider's scan of the same folder is another source.
    assert(!SourceProviders.sameSource(byPath, SourceIdentity("delta", None, Set("/data/a"))))
    // The same folders on another store (bucket, file system) are another source, where both name their store ...
    def stored(table: Option[String], roots: String*) = SourceIdentity.of(files.name, table, roots)
    val onS3 = SourceSpec(None, "parquet", Seq("s3a://prod/data/a"), Map.empty, Nil)
    assert(SourceProviders.sameSource(onS3, stored(None, "s3a://prod/data/a")))
    assert(SourceProviders.sameSource(onS3, stored(None, "S3A://prod/data/a/")))
    assert(SourceProviders.sameSource(onS3, stored(None, "s3a://prod/data/a/p=1")))
    assert(!SourceProviders.sameSource(onS3, stored(None, "s3a://staging/data/a")))
    assert(!SourceProviders.sameSource(onS3, stored(None, "s3a://staging/data/a/p=1")))
    assert(!SourceProviders.sameSource(onS3, stored(None, "file:/data/a")))
    assert(!SourceProviders.sameSource(byPath, stored(None, "hdfs://nn:8020/data/a")))
    assert(SourceProviders.sameSource(byPath, stored(None, "file:///data/a")))
    assert(!SourceProviders.sameSource(SourceSpec(None, "parquet", Seq("s3a://prod/"), Map.empty, Nil), stored(None, "s3a://prod/x")))
    assert(!SourceProviders.ownSource(onS3, stored(None, "s3a://staging/data/a")))
    assert(SourceProviders.sameRoot("s3a://prod/t", "s3a://prod/t/") && !SourceProviders.sameRoot("s3a://prod/t", "s3a://dev/t"))
    // ... told coarsely: two spellings of one store are one (S3's schemes, a host's case and port) ...
    assert(SourceProviders.sameSource(onS3, stored(None, "s3://prod/data/a")))
    val onHdfs = SourceSpec(None, "parquet", Seq("hdfs://nn.example:8020/data/a"), Map.empty, Nil)
    assert(SourceProviders.sameSource(onHdfs, stored(None, "hdfs://NN.example/data/a/p=1")))
    assert(!SourceProviders.sameSource(onHdfs, stored(None, "hdfs://other/data/a")))
    // ... by path alone where one side does not name its store (a bare path recorded by an older
    // bloomindex, a sink's `hdfs:///data/a`: the default file system's).
    assert(SourceProviders.sameSource(onS3, stored(None, "/data/a")))
    assert(SourceProviders.sameSource(onS3, target(None, "/data/a")))
    assert(SourceProviders.sameSource(onHdfs, stored(None, "hdfs:///data/a")))
    assert(SourceProviders.qualifiedRoot("hdfs:///data/a").isEmpty && SourceProviders.qualifiedRoot("/data/a").isEmpty)
    // The advisor's scans (recorded in the history, or of a query) are told apart the same way:
    // staging's scans are not judged against prod's index, nor grouped with prod's scans ...
    val staging = ScannedSource(files.name, None, "parquet", Seq("s3a://staging/data/a"))
    val prod = staging.copy(roots = Seq("s3a://prod/data/a"))
    assert(!SourceProviders.ownSource(onS3, staging.identity) && SourceProviders.ownSource(onS3, prod.identity))
    assert(staging.key != prod.key && staging.key == staging.copy(roots = Seq("s3://staging/data/a/")).key)
    assert(staging.ref.contains(SourceRef(Seq("parquet", "s3a://staging/data/a"))))
    // ... while a record of an older bloomindex (a bare path) is compared by path, as then.
    assert(SourceProviders.ownSource(onS3, staging.copy(roots = Seq("/data/a")).identity))
    // SHOW ... ON and DROP ... ON match with the same function.
    assert(new IndexCatalog(spark).indexesOn(SourceResolverFor.path(spark, path)).map(_.spec.name) == Seq("ev"))
  }

  test("a scan that decodes otherwise: the column does not answer, and the reason is given") {
    val d = decide("id = 150L", scanOf(frame).copy(format = "orc")).get
    assert(d.skipped.isEmpty && d.info.index == "none")
    assert(d.info.notApplied.exists(_.contains("format differs: built from parquet, queried as orc")), d.info.notApplied)
  }

  test("a file that is not held as it is now is read; none held: stale beyond use") {
    val scan = scanOf(frame)
    val files = scan.allFiles()
    def touched(f: FileStatus) = new FileStatus(f.getLen, false, 1, 0L, f.getModificationTime + 1000, f.getPath)
    // The file holding 150 unchanged, the others not as the index holds them: nothing to skip.
    val d = decide("id = 150L", scan, Some(files.map(touched))).get
    assert(d.skipped.isEmpty)
    assert(d.info.notApplied.exists(_.contains("stale beyond use")), d.info.notApplied)
    // One file changed: the other two that cannot match are still skipped, the changed one read.
    val changed = files.find(f => !frame.where("id = 150L").inputFiles.exists(_.endsWith(f.getPath.getName))).get
    val d2 = decide("id = 150L", scan, Some(files.map(f => if (f eq changed) touched(f) else f))).get
    assert(d2.info.filesKept == 2 && !d2.skipped.exists(_.endsWith(changed.getPath.getName)))
  }

  test("a file changed on storage since the scan listed it is read (FreshFiles)") {
    val scan = scanOf(frame)
    val files = scan.allFiles()
    val victim = files.find(f => !frame.where("id = 150L").inputFiles.exists(_.endsWith(f.getPath.getName))).get
    assert(new File(victim.getPath.toUri).setLastModified(victim.getModificationTime + 5000))
    val d = decide("id = 150L", scan, Some(files)).get
    assert(d.info.filesKept == 2 && !d.skipped.exists(_.endsWith(victim.getPath.getName)), d.info)
    assert(d.info.notApplied.exists(_.contains("changed on storage")), d.info.notApplied)
  }

  test("the files skipped held as positions in the index column answer as their paths do") {
    val key = org.apache.spark.sql.bloomindex.BloomIndexSQLConf.TEST_SKIPPED_PATHS_MAX.key
    val scan = scanOf(frame)
    val files = scan.allFiles()
    def both(sql: String): (Decision, Decision) = {
      val byPaths = decide(sql).get
      spark.conf.set(key, "0")
      try (byPaths, decide(sql).get) finally spark.conf.unset(key)
    }
    for (sql <- Seq("id = 150L", "id IN (5L, 305L)", "id = 100000L", "id = 150L OR s = 's5'", "id IS NULL")) {
      val (p, q) = both(sql)
      assert(p.skipped.isInstanceOf[SkippedFiles.Paths], sql)
      assert(q.skipped.isInstanceOf[SkippedFiles.Positions] || q.skipped.isEmpty, sql)
      assert(p.info == q.info && p.skipped.size == q.skipped.size && p.skipped.paths.toSet == q.skipped.paths.toSet, sql)
      files.foreach { f =>
        assert(p.skipped.contains(f.getPath) == q.skipped.contains(f.getPath), s"$sql: ${f.getPath}")
        assert(q.skipped.contains(f.getPath) == q.skipped.contains(f.getPath.toString), s"$sql: ${f.getPath}")
        // By identity: the listed file as decided is skipped by both forms; the same path with
        // another size or modification time (rewritten since, listed again) by neither.
        assert(p.skipped.contains(f) == p.skipped.contains(f.getPath) && q.skipped.contains(f) == q.skipped.contains(f.getPath),
          s"$sql: ${f.getPath}")
        for (other <- Seq(new FileStatus(f.getLen + 1, false, 1, 0L, f.getModificationTime, f.getPath),
            new FileStatus(f.getLen, false, 1, 0L, f.getModificationTime + 1000, f.getPath))) {
          assert(!p.skipped.contains(other) && !q.skipped.contains(other), s"$sql: ${f.getPath} rewritten")
        }
      }
      // A file the decision did not list is never skipped.
      assert(!q.skipped.contains(new org.apache.hadoop.fs.Path(files.head.getPath.getParent, "part-new.parquet")))
      // The same decision made again is equal (a plan over it matches a cached one), but for
      // its check against storage, which is the run's own.
      spark.conf.set(key, "0")
      try assert(decide(sql).get.copy(check = None) == q.copy(check = None), sql) finally spark.conf.unset(key)
    }
    // Positions: three of the four files skipped, the scan reads the one that holds the row.
    spark.conf.set(key, "0")
    try {
      val q = frame.where("id = 150L")
      assert(q.inputFiles.length == 1 && q.collect().map(_.getLong(0)).toSeq == Seq(150L))
    } finally spark.conf.unset(key)
  }

  test("the probe split over threads decides as on one") {
    val scan = scanOf(frame)
    val view = new IndexCatalog(spark).viewsFor(scan).head
    // The listing many times over (the same files again answer the same), in ranges of 1 to 5 files.
    val files = Seq.fill(7)(scan.allFiles()).flatten.toIndexedSeq
    for (sql <- Seq("id = 150L", "id IN (5L, 305L)", "s = 's250' AND id = 250L", "id = 150L OR s = 's5'")) {
      val pred = FilePredicate.translate(condition(sql), view).toOption.get
      val cols = pred.columns.toArray
      val data = Array.tabulate(view.spec.columns.size)(i => if (cols.contains(i)) view.columnData(i) else null)
      val one = IndexCatalog.probe(files, data, cols, pred, threads = 1, filesPerThread = files.size)
      assert(one.count == 7 * (4 - decide(sql).get.info.filesKept) && one.covered == files.size && one.read == files.size, sql)
      for (threads <- Seq(2, 3, 8); per <- Seq(1, 2, 5)) {
        val many = IndexCatalog.probe(files, data, cols, pred, threads, per)
        assert(many.copy(at = one.at) == one, s"$sql: $threads threads, $per per range")
        assert((0 until files.size).filter(one.skipped.get).forall(j => many.at(j) == one.at(j)), sql)
      }
    }
  }

  test("an unfiltered listing: what Spark's listing leaves out (hidden names, empty files) is neither counted nor skipped") {
    import org.apache.hadoop.fs.Path
    // Spark's PartitioningAwareFileIndex.isDataPath and non-empty test, by name and size.
    val dir = "file:/data/t"
    for ((name, size, reads) <- Seq(("part-0.parquet", 10L, true), ("part-0.parquet", 0L, false), (".part-0.crc", 10L, false),
        ("_common_metadata", 10L, false), ("_SUCCESS", 10L, false), ("_k=1", 10L, true), ("k=_1", 10L, true), ("a_b", 10L, true)))
      assert(IndexCatalog.read(new Path(s"$dir/$name"), size) == reads, s"$name, $size bytes")
    val scan = scanOf(frame)
    val listed = scan.allFiles()
    val folder = listed.head.getPath.getParent
    def status(name: String, size: Long) = new FileStatus(size, false, 1, 1L, 1L, new Path(folder, name))
    val extra = Seq(status("part-empty.parquet", 0L), status("_common_metadata", 100L), status(".hidden", 100L))
    val all = listed ++ extra
    val unfiltered = new IndexCatalog(spark).decide(condition("id = 150L"), scan, all, unfiltered = true).get
    val exact = decide("id = 150L").get
    assert(unfiltered.info.filesTotal == 4 && unfiltered.info.filesKept == 1, unfiltered.info)
    assert(unfiltered.skipped.paths.toSet == exact.skipped.paths.toSet && unfiltered.info.bytesSkipped == exact.info.bytesSkipped)
    assert(unfiltered.bytesRead == listed.map(_.getLen).sum && exact.bytesRead == unfiltered.bytesRead)
    assert(extra.forall(f => !unfiltered.skipped.contains(f.getPath)))
    // Given as what the scan reads, the same files count (and, not indexed, are read).
    val asListed = new IndexCatalog(spark).decide(condition("id = 150L"), scan, all).get
    assert(asListed.info.filesTotal == 7 && asListed.info.filesKept == 4, asListed.info)
  }

  test("a folder read by path with an empty file and a summary file: pruned over the files Spark reads, the same rows") {
    val first = new File(scanOf(frame).allFiles().head.getPath.toUri)
    val folder = first.getParentFile
    Files.write(new File(folder, "part-empty.parquet").toPath, Array.emptyByteArray)
    // A summary file as older Parquet writers left them (Spark reads its footer for the schema only).
    Files.copy(first.toPath, new File(folder, "_common_metadata").toPath)
    val q = frame.where("id = 150L")
    val info = q.queryExecution.optimizedPlan.collectFirst {
      case org.apache.spark.sql.execution.datasources.LogicalRelation(r: org.apache.spark.sql.execution.datasources.HadoopFsRelation, _, _, _, _)
          if r.location.isInstanceOf[bloomindex.pruning.BloomPrunedFileIndex] =>
        r.location.asInstanceOf[bloomindex.pruning.BloomPrunedFileIndex].info
    }
    assert(info.exists(i => i.filesTotal == 4 && i.filesKept == 1), info)
    // Spark's inputFiles is the listing before its last filter: the two extra files, not skipped.
    assert(q.inputFiles.map(p => new File(new java.net.URI(p)).getName).count(n => n == "part-empty.parquet" || n == "_common_metadata") == 2)
    assert(q.inputFiles.length == 3 && q.collect().map(_.getLong(0)).toSeq == Seq(150L))
  }

  test("the files a decision kept answer the scan's listing until its file index lists again, or the scan filters on file metadata") {
    import bloomindex.pruning.BloomPrunedFileIndex
    import org.apache.spark.sql.execution.FileSourceScanExec
    def prunedOf(df: DataFrame): BloomPrunedFileIndex = df.queryExecution.optimizedPlan.collectFirst {
      case org.apache.spark.sql.execution.datasources.LogicalRelation(r: org.apache.spark.sql.execution.datasources.HadoopFsRelation, _, _, _, _)
          if r.location.isInstanceOf[BloomPrunedFileIndex] => r.location.asInstanceOf[BloomPrunedFileIndex]
    }.get
    def names(dirs: Seq[org.apache.spark.sql.execution.datasources.PartitionDirectory]) =
      dirs.flatMap(_.files.map(_.getPath.getName)).sorted
    val df = frame
    val pruned = prunedOf(df.where("id = 150L"))
    val kept = pruned.kept.get
    // The same files as the listing filtered file by file.
    val filtered = new BloomPrunedFileIndex(pruned.delegate, pruned.skipped, pruned.info)
    assert(kept.answers(pruned.delegate, Nil) && kept.files.length == 1)
    assert(names(pruned.listFiles(Nil, Nil)) == names(filtered.listFiles(Nil, Nil)))
    // A filter on file metadata: Spark prunes files by it in listFiles, so the listing answers.
    val byName = df.select("id", "_metadata.file_name").where("id = 150L AND _metadata.file_name LIKE 'part-%'")
    val scan = byName.queryExecution.executedPlan.collectFirst { case s: FileSourceScanExec => s }.get
    assert(scan.dataFilters.exists(_.references.exists(_.name == "file_name")), scan.dataFilters)
    assert(!kept.answers(pruned.delegate, scan.dataFilters))
    assert(byName.collect().map(_.getLong(0)).toSeq == Seq(150L))
    // A file written, then the file index listed again: not the decided listing, the new file read.
    val folder = df.inputFiles.map(p => new File(new java.net.URI(p)).getParentFile).head
    spark.range(150, 151).selectExpr("id", "'new' AS s").coalesce(1).write.parquet(new File(folder.getParentFile, "more").toString)
    val written = new File(folder.getParentFile, "more").listFiles().filter(_.getName.endsWith(".parquet")).head
    Files.copy(written.toPath, new File(folder, "part-new.parquet").toPath)
    assert(names(pruned.listFiles(Nil, Nil)) == names(filtered.listFiles(Nil, Nil)))
    pruned.delegate.refresh()
    assert(!kept.answers(pruned.delegate, Nil))
    assert(names(pruned.listFiles(Nil, Nil)).contains("part-new.parquet"))
    assert(names(pruned.listFiles(Nil, Nil)) == names(filtered.listFiles(Nil, Nil)))
  }

  test("a column not indexed, or gone from the scan, does not answer") {
    val d = decide("amount = 1L").get
    assert(d.skipped.isEmpty && d.info.notApplied.exists(_.contains("column not indexed: amount")), d.info.notApplied)
    val scan = scanOf(frame)
    val without = scan.copy(dataSchema = org.apache.spark.sql.types.StructType(scan.dataSchema.filterNot(_.name == "s")))
    val view = new IndexCatalog(spark).viewsFor(without).head
    assert(view.unusable.get("s").exists(_.contains("no column named exactly s")), view.unusable)
    // The other column still answers.
    assert(view.column("id").isRight)
  }
}

/** The source `parquet.`path`` as a statement names it. */
private object SourceResolverFor {
  def path(spark: SparkSession, path: String): SourceSpec = bloomindex.source.SourceResolver.resolvePath(spark, "parquet", path)
}
