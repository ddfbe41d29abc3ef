package bloomindex.layout

import java.nio.file.{Files, Paths}

import bloomindex.api.BloomIndex
import bloomindex.catalog.IndexCache
import bloomindex.testing.{TempDirs, TestSpark}

import org.apache.spark.sql.SparkSession
import org.scalatest.funsuite.AnyFunSuite

/**
 * A column stored in more Parquet index files than `spark.bloomindex.load.driverMaxFiles` (the
 * `columns` layout) is read by Spark jobs: the same rows the driver reads, in as many jobs and
 * tasks as the data asks, and a file that fails is told apart as the driver tells it (damage is
 * recorded; a store's error is retried later: MaxWaitSuite).
 */
class ColumnJobSuite extends AnyFunSuite {

  private lazy val spark: SparkSession = TestSpark.session

  /** A `columns`-layout index on `id` and `s` over 8 files of 50 rows; returns the source's path. */
  private def indexed(name: String): String = {
    val path = TempDirs.create("bloomindex-src").resolve(name).toString
    spark.range(0, 400, 1, 8).selectExpr("id", "concat('v', id % 50) AS s").write.parquet(path)
    BloomIndex(spark).create(name).onPath("parquet", path).columns("id", "s").execute()
    path
  }

  /** Files each of a few lookups reads, and its answer, on a loaded index of `name`. */
  private def lookups(path: String): Seq[(String, Seq[String], Seq[Long])] =
    Seq("id = 3", "id = 150", "id = 399", "id = 1000", "s = 'v7'", "s = 'w'", "id IN (20, 390)").map { where =>
      val q = spark.read.parquet(path).where(where)
      (where, q.inputFiles.toSeq.sorted, q.collect().map(_.getLong(0)).toSeq.sorted)
    }

  /** The Parquet index data files of `column` of index `name` under `root`. */
  private def columnFiles(root: String, name: String, column: String): Seq[java.nio.file.Path] =
    Files.walk(Paths.get(root, name)).toArray.toSeq.map(_.asInstanceOf[java.nio.file.Path])
      .filter(p => p.toString.contains(s"column=$column") && p.getFileName.toString.endsWith(".parquet")).sortBy(_.toString)

  private def withSettings[T](settings: (String, String)*)(body: => T): T = {
    val root = TempDirs.create("bloomindex-job-root").toAbsolutePath.toString
    try {
      spark.conf.set("spark.bloomindex.root", root)
      spark.conf.set("spark.bloomindex.build.blockMajor", "false")
      settings.foreach { case (k, v) => spark.conf.set(k, v) }
      IndexCache.clear()
      body
    } finally {
      (Seq("spark.bloomindex.root", "spark.bloomindex.build.blockMajor") ++ settings.map(_._1)).foreach(spark.conf.unset)
      IndexCache.clear()
    }
  }

  test("read by jobs, in several jobs and tasks: the files each lookup reads are those of the driver's read") {
    withSettings() {
      val path = indexed("job_same")
      val byDriver = lookups(path)
      // Pruning happened: each point lookup of a value that exists reads 1 of 8 files.
      assert(byDriver.find(_._1 == "id = 150").get._2.size == 1, byDriver)
      val root = spark.conf.get("spark.bloomindex.root")
      val dataFiles = columnFiles(root, "job_same", "id").size
      assert(dataFiles >= 2, dataFiles)
      val (jobBytes, taskBytes) = (IndexStore.JobBytes, IndexStore.TaskBytes)
      try {
        // (bytes a job, bytes a task): one job of one task; one job of a task per file; a job per file.
        Seq((Long.MaxValue, 64L << 20), (Long.MaxValue, 1L), (1L, 64L << 20)).foreach { case limits @ (job, task) =>
          IndexStore.JobBytes = job // 1: a job per file (as a file is at least the limit)
          IndexStore.TaskBytes = task
          spark.conf.set("spark.bloomindex.load.driverMaxFiles", "0")
          IndexCache.clear()
          // The plan of a lookup on `id` (no job of its own): the jobs are the load's.
          val (jobs, tasks) = (IndexStore.loadJobsRun(), IndexStore.loadTasksRun())
          spark.read.parquet(path).where("id = 150").inputFiles
          val ran = IndexStore.loadJobsRun() - jobs
          val ranTasks = IndexStore.loadTasksRun() - tasks
          assert(if (job == 1L) ran == dataFiles else ran == 1, s"$limits: $ran jobs for $dataFiles files")
          assert(if (job == 1L || task == 1L) ranTasks == dataFiles else ranTasks == 1, s"$limits: $ranTasks tasks")
          assert(lookups(path) == byDriver, s"$limits")
          spark.conf.unset("spark.bloomindex.load.driverMaxFiles")
        }
      } finally { IndexStore.JobBytes = jobBytes; IndexStore.TaskBytes = taskBytes }
    }
  }

  test("a task's rows replayed: a file whose row the driver refuses fails there, its other rows and length skipped") {
    withSettings() { replayed() }
  }

  private def replayed(): Unit = {
    val dir = TempDirs.create("bloomindex-jobrows")
    val path = dir.resolve("t").toString
    spark.range(0, 6, 1, 2).selectExpr("id").write.parquet(path)
    BloomIndex(spark).create("job_rows").onPath("parquet", path).columns("id").execute()
    val files = columnFiles(spark.conf.get("spark.bloomindex.root"), "job_rows", "id").map(_.toString)
    val conf = spark.sessionState.newHadoopConf()
    val bytes = IndexStore.JobRows.read(conf, (files :+ dir.resolve("gone.parquet").toString).iterator, filters = true)
    def replay(refuse: String => Boolean) = {
      val rows = Seq.newBuilder[String]; val failed = Seq.newBuilder[(String, Int)]; var lengths = 0
      IndexStore.JobRows.replay(bytes, (p, _, _, _, _, f) => {
        assert(f != null && f.nonEmpty)
        if (refuse(p)) throw new IllegalStateException("refused") else rows += p
      }, (file, _, kind) => failed += file -> kind, _ => lengths += 1)
      (rows.result(), failed.result(), lengths)
    }
    val (all, failedAll, lengthsAll) = replay(_ => false)
    assert(all.size == 2 && lengthsAll == files.size, all) // one row per source file; a length per index file
    // The file that is gone: a failure that does not pass (damage), after every readable file.
    assert(failedAll == Seq(dir.resolve("gone.parquet").toString -> 0), failedAll)
    // The rows of each index file, read alone: the victim's file's rows are all skipped, the others kept.
    val rowsOf = files.map { f =>
      val rows = Seq.newBuilder[String]
      IndexStore.JobRows.replay(IndexStore.JobRows.read(conf, Iterator(f), filters = true),
        (p, _, _, _, _, _) => rows += p, (_, _, _) => (), _ => ())
      f -> rows.result()
    }.toMap
    val victim = all.head
    val victimFile = files.find(f => rowsOf(f).contains(victim)).get
    val (kept, failed, lengths) = replay(_ == victim)
    assert(kept.sorted == files.filter(_ != victimFile).flatMap(rowsOf).sorted, (kept, rowsOf))
    assert(failed.map(_._1).toSet == Set(victimFile, dir.resolve("gone.parquet").toString), failed)
    assert(failed.forall(_._2 == 0), failed) // damage, both
    assert(lengths == lengthsAll - 1, lengths)
  }

  test("read by jobs: a damaged index data file is recorded as damage, and its files are read") {
    withSettings("spark.bloomindex.load.driverMaxFiles" -> "0") {
      val path = indexed("job_damage")
      val root = spark.conf.get("spark.bloomindex.root")
      val before = lookups(path)
      val data = columnFiles(root, "job_damage", "id")
      assert(data.nonEmpty)
      val victim = data.head
      // The same length, other bytes; and no Hadoop checksum file to refuse it first.
      val length = Files.size(victim).toInt
      Files.write(victim, Array.tabulate[Byte](length)(i => (i * 31 + 7).toByte))
      Files.deleteIfExists(victim.resolveSibling("." + victim.getFileName + ".crc"))
      IndexCache.clear()
      val after = lookups(path)
      after.zip(before).foreach { case ((where, files, rows), (_, filesBefore, rowsBefore)) =>
        assert(rows == rowsBefore, where)
        if (where.startsWith("id")) assert(filesBefore.toSet.subsetOf(files.toSet), where)
        else assert(files == filesBefore, where) // column s is intact
      }
      assert(after.find(_._1 == "id = 150").get._2.size > 1, "the damaged file's source files are read")
      val damage = bloomindex.log.Checksums.damageUnder("").map(d => new org.apache.hadoop.fs.Path(d._1).toUri.getPath)
        .filter(_.contains("/job_damage/"))
      assert(damage == Seq(victim.toString), damage)
    }
  }
}
