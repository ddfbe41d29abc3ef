package bloomindex.source

import java.util.concurrent.{Callable, Executors}

import scala.reflect.ClassTag

import bloomindex.compat.ConfWritable

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf

/**
 * Something small read of each of many source files (a Parquet footer, an Avro header) before a
 * build: on the driver for up to [[DriverFiles]] files, by a Spark job for more (up to four tasks
 * a core, at least [[DriverFiles]] files a task). A footer is a request or two on an object
 * store, so each reader (the driver, each task) reads `spark.bloomindex.load.threads` files at
 * once. Used by the encryption check, the legacy-calendar check and Iceberg's column survey.
 */
private[bloomindex] object FileSurvey {

  /** Up to this many files are read on the driver, more in a Spark job. */
  val DriverFiles = 64

  /**
   * `read` of each of `files` (with `conf`, or the copy of it shipped to a task), in their order.
   * `read` runs in tasks too, so it must be serializable; it decides itself what an unreadable
   * file gives. `what` names the reads in the job's description.
   */
  def apply[F: ClassTag, A: ClassTag](spark: SparkSession, conf: Configuration, files: Seq[F], what: String)
      (read: (F, Configuration) => A): Seq[A] = {
    val threads = spark.sessionState.conf.getConf(BloomIndexSQLConf.LOAD_THREADS)
    if (files.size <= DriverFiles) return readAll(files, conf, threads, read)
    val sc = spark.sparkContext
    val shipped = sc.broadcast(new ConfWritable(conf))
    val description = sc.getLocalProperty("spark.job.description")
    try {
      sc.setJobDescription(s"bloomindex: $what of ${files.size} files")
      // Collected as objects: a task's result is then an Object[] (which Kryo has registered), not an
      // array of the caller's type (a Seq[] would need registering where Kryo requires it).
      sc.parallelize(files, math.max(1, math.min(sc.defaultParallelism * 4, files.size / DriverFiles)))
        .mapPartitions(it => readAll(it.toSeq, shipped.value.conf, threads, read).iterator.map(a => a: Any))
        .collect().toSeq.map(_.asInstanceOf[A])
    } finally {
      sc.setJobDescription(description)
      shipped.destroy()
    }
  }

  /** `read` of each of `files` here, `threads` at once. */
  private def readAll[F, A](files: Seq[F], conf: Configuration, threads: Int, read: (F, Configuration) => A): Seq[A] =
    if (files.size <= 1) files.map(read(_, conf))
    else {
      val pool = Executors.newFixedThreadPool(math.max(1, math.min(threads, files.size)))
      try files.map(f => pool.submit(new Callable[A] { def call(): A = read(f, conf) })).map(_.get())
      finally pool.shutdownNow()
    }
}
