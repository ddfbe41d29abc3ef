package bloomindex.pruning

import bloomindex.source.files.BloomPrunedV2FileIndex
import bloomindex.testing.{SmallSource, TempDirs, TestSpark}

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.{FileSourceScanExec, SparkPlan}
import org.apache.spark.sql.execution.datasources.LogicalRelation
import org.apache.spark.sql.execution.datasources.v2.{BatchScanExec, FileScan}
import org.scalatest.BeforeAndAfterEach
import org.scalatest.funsuite.AnyFunSuite

/**
 * Each pruning entry point on a small plan (four Parquet files, file k holding ids k*100 to
 * k*100+99, one index over the folder): what it does to the plan it is given, and what it
 * leaves alone.
 */
class PruningRulesSuite extends AnyFunSuite with BeforeAndAfterEach {

  private lazy val spark: SparkSession = TestSpark.session
  private var path: String = _

  override def beforeEach(): Unit = {
    path = SmallSource.create(spark, "id")
  }

  override def afterEach(): Unit = {
    spark.conf.unset("spark.sql.sources.useV1SourceList")
    spark.conf.unset("spark.bloomindex.pruning.enabled")
  }

  private def query: DataFrame = spark.read.parquet(path).where("id = 150L")

  private def prunedIndexes(plan: LogicalPlan): Seq[BloomPrunedFileIndex] =
    plan.collect { case LogicalRelation(r, _, _, _, _) => r }.collect {
      case r: org.apache.spark.sql.execution.datasources.HadoopFsRelation => r.location
    }.collect { case b: BloomPrunedFileIndex => b }

  /**
   * A pruned index that kept one of the four files, listed again after a skipped file was
   * rewritten and the listing refreshed (a plan run after `REFRESH TABLE`): that file is read.
   */
  private def assertReadsRewritten(pruned: org.apache.spark.sql.execution.datasources.FileIndex,
      listed: => Seq[org.apache.hadoop.fs.FileStatus]): Unit = {
    val before = listed
    assert(before.size == 1, before)
    val victim = new java.io.File(path).listFiles().find(f => f.getName.endsWith(".parquet") &&
      !before.exists(_.getPath.getName == f.getName)).get
    assert(victim.setLastModified(victim.lastModified() + 7000))
    pruned.refresh()
    val after = listed.map(_.getPath.getName).toSet
    assert(after == before.map(_.getPath.getName).toSet + victim.getName, after)
  }

  test("BloomIndexPruning (pre-CBO): a filter on a V1 file relation gets a pruned file index") {
    // The analyzed plan, before any of Spark's rules: the filter sits right on the relation.
    val plan = query.queryExecution.analyzed
    assert(prunedIndexes(plan).isEmpty)
    val pruned = prunedIndexes(new BloomIndexPruning(spark).apply(plan))
    assert(pruned.size == 1 && pruned.head.info.filesKept == 1 && pruned.head.info.filesTotal == 4, pruned)
    assert(pruned.head.skipped.size == 3)
    assertReadsRewritten(pruned.head, pruned.head.listFiles(Nil, Nil).flatMap(_.files).map(_.fileStatus))
    // Off: the plan is returned as it is.
    spark.conf.set("spark.bloomindex.pruning.enabled", "false")
    assert(new BloomIndexPruning(spark).apply(plan) eq plan)
  }

  test("a partitioned folder read by path: the decision probes the partitions the scan reads, not all") {
    // 4 partitions p = 0..3 of 2 files each; ids 200p .. 200p+199, 100 a file.
    val dir = TempDirs.create("bloomindex-parts").resolve("t").toString
    spark.range(0, 800).selectExpr("id", "CAST(id DIV 200 AS INT) AS p").repartitionByRange(8, org.apache.spark.sql.functions.col("id"))
      .write.partitionBy("p").parquet(dir)
    bloomindex.api.BloomIndex(spark).create("parts").onPath("parquet", dir).columns("id").execute()
    def decided(where: String): BloomPrunedFileIndex = {
      val pruned = prunedIndexes(new BloomIndexPruning(spark).apply(spark.read.parquet(dir).where(where).queryExecution.analyzed))
      assert(pruned.size == 1, where)
      pruned.head
    }
    // With a partition filter: the 2 files of p = 1 are probed (and counted), one kept.
    val one = decided("p = 1 AND id = 250L")
    assert(one.info.filesTotal == 2 && one.info.filesKept == 1, one.info)
    // A filter on a partition expression Spark prunes by, and none: all 8 files otherwise.
    assert(decided("p IN (0, 3) AND id = 650L").info.filesTotal == 4)
    val all = decided("id = 250L")
    assert(all.info.filesTotal == 8 && all.info.filesKept < 4, all.info) // the holder, and a false positive here
    // The same rows as without the index, for each.
    for (where <- Seq("p = 1 AND id = 250L", "p IN (0, 3) AND id = 650L", "id = 250L", "p = 2 AND id = 250L")) {
      val on = spark.read.parquet(dir).where(where).collect().map(_.toString).sorted.toSeq
      spark.conf.set("spark.bloomindex.pruning.enabled", "false")
      val off = try spark.read.parquet(dir).where(where).collect().map(_.toString).sorted.toSeq
        finally spark.conf.unset("spark.bloomindex.pruning.enabled")
      assert(on == off, where)
    }
  }

  test("BloomIndexPlanning (planner): a filtered V2 file scan is planned over the kept files") {
    spark.conf.set("spark.sql.sources.useV1SourceList", "")
    val optimized = query.queryExecution.optimizedPlan
    val planned = new BloomIndexPlanning(spark).apply(optimized)
    assert(planned.nonEmpty)
    val indexes = planned.flatMap(_.collect { case b: BatchScanExec => b.scan }).collect {
      case f: FileScan => f.fileIndex
    }
    assert(indexes.size == 1, planned)
    indexes.head match {
      case b: BloomPrunedV2FileIndex =>
        assert(b.info.filesKept == 1 && b.allFiles().size == 1)
        assertReadsRewritten(b, b.listFiles(Nil, Nil).flatMap(_.files).map(_.fileStatus))
      case other => fail(s"not pruned: $other")
    }
    // A plan it has nothing to prune in is left to Spark's strategies.
    assert(new BloomIndexPlanning(spark).apply(spark.read.parquet(path).queryExecution.optimizedPlan).isEmpty)
  }

  test("PlannedScanPruning leaves a plain file scan alone; MarkPrunedScans marks a pruned one once") {
    spark.conf.set("spark.bloomindex.pruning.enabled", "false")
    val plain = query.queryExecution.sparkPlan
    assert(new PlannedScanPruning(spark).apply(plain).collect { case s: FileSourceScanExec => s }.head eq
      plain.collect { case s: FileSourceScanExec => s }.head)
    assert(MarkPrunedScans(plain).collect { case m: BloomIndexPrunedScanExec => m }.isEmpty)
    spark.conf.unset("spark.bloomindex.pruning.enabled")
    val pruned: SparkPlan = query.queryExecution.sparkPlan
    val marked = MarkPrunedScans(pruned)
    val marks = marked.collect { case m: BloomIndexPrunedScanExec => m }
    assert(marks.size == 1 && marks.head.info.index == "ev" && marks.head.info.filesKept == 1)
    // Applied again (adaptive execution re-runs columnar rules): no second mark.
    assert(MarkPrunedScans(marked).collect { case m: BloomIndexPrunedScanExec => m }.size == 1)
  }

  test("PruningReport: the same decision in words, V1 and V2") {
    val v1 = PruningReport.scanLines(query)
    assert(v1.size == 1 && v1.head.contains("index ev (log version") && v1.head.contains("kept 1/4 files"), v1)
    spark.conf.set("spark.sql.sources.useV1SourceList", "")
    val v2 = PruningReport.scanLines(query)
    assert(v2.size == 1 && v2.head.contains("kept 1/4 files"), v2)
    spark.conf.set("spark.bloomindex.pruning.enabled", "false")
    assert(PruningReport.scanLines(query).head.contains("not pruned: pruning is off (spark.bloomindex.pruning.enabled)"))
  }
}
