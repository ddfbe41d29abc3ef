package bloomindex.source

import java.util.Locale

import scala.util.control.NonFatal

import bloomindex.errors.BloomIndexErrors
import bloomindex.log.SourceSpec

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.execution.datasources.{FileIndex, HadoopFsRelation}

/**
 * Delta Lake tables as index sources, reached only through Spark's public APIs (the `delta`
 * data source, `DESCRIBE HISTORY`, `DESCRIBE DETAIL`): this code compiles and runs without
 * Delta on the classpath, and a Delta source is refused with a clear message when it is not.
 *
 * The files of a Delta table are those of a snapshot, read from its log (a Delta folder also
 * holds files that later commits removed): the snapshot's `TahoeFileIndex` lists them with the
 * size and modification time its log records. A Delta data file is never rewritten in place,
 * so a path names the same bytes for ever.
 */
object DeltaSource {

  val Format: String = DeltaFiles.Format

  def isDeltaIndex(index: FileIndex): Boolean = DeltaFiles.isDeltaIndex(index)

  def isDeltaRelation(rel: HadoopFsRelation): Boolean = isDeltaIndex(rel.location)

  private def quotedPath(path: String): String = s"delta.`${path.replace("`", "``")}`"

  private def requireDelta(spark: SparkSession, what: String): Unit = {
    val available = try {
      org.apache.spark.sql.execution.datasources.DataSource.lookupDataSource(Format, spark.sessionState.conf)
      true
    } catch { case NonFatal(_) => false }
    if (!available) throw BloomIndexErrors.deltaUnavailable(what)
  }

  /** `delta.`path``: the path must hold a Delta table (a `_delta_log` folder). */
  def resolvePath(spark: SparkSession, path: String): SourceSpec = {
    val p = new Path(path)
    val fs = p.getFileSystem(spark.sessionState.newHadoopConf())
    if (!fs.exists(p)) throw BloomIndexErrors.pathNotFound(path)
    if (!fs.exists(new Path(p, "_delta_log"))) {
      throw BloomIndexErrors.notDeltaTable(path)
    }
    requireDelta(spark, quotedPath(path))
    spec(spark, None, fs.makeQualified(p).toString)
  }

  /** A catalog table whose relation is Delta's: indexed by its location, named by `table`. */
  def resolveTable(spark: SparkSession, table: String, rel: HadoopFsRelation): SourceSpec = {
    val location = rel.location.rootPaths match {
      case Seq(p) => p.toString
      case other => throw BloomIndexErrors.deltaRootPaths(table, other.size)
    }
    spec(spark, Some(table), location)
  }

  private def spec(spark: SparkSession, table: Option[String], location: String): SourceSpec = {
    val what = table.getOrElse(quotedPath(location))
    val detail = try spark.sql(s"DESCRIBE DETAIL ${quotedPath(location)}").head() catch {
      case NonFatal(e) => throw BloomIndexErrors.deltaLogUnreadable(what, e)
    }
    val props = detail.getMap[String, String](detail.fieldIndex("properties"))
    val mapping = Option(props).flatMap(m => Option(m.getOrElse("delta.columnMapping.mode", null)))
      .map(_.toLowerCase(Locale.ROOT)).getOrElse("none")
    if (mapping != "none") throw BloomIndexErrors.deltaColumnMapping(what, mapping)
    val partitions = detail.getSeq[String](detail.fieldIndex("partitionColumns"))
    SourceSpec(table, Format, Seq(location), Map.empty, partitions)
  }

  /** The table's newest version, from its log. */
  def currentVersion(spark: SparkSession, location: String): Long =
    spark.sql(s"DESCRIBE HISTORY ${quotedPath(location)} LIMIT 1").select("version").head().getLong(0)

  /** The table as of `version` (or its newest snapshot). */
  def dataFrame(spark: SparkSession, location: String, version: Option[Long] = None): DataFrame = {
    val reader = spark.read.format(Format)
    version.fold(reader)(v => reader.option("versionAsOf", v.toString)).load(location)
  }

  /** The files of the table's current snapshot (from its log), and that snapshot's version. */
  def snapshot(spark: SparkSession, s: SourceSpec): (HadoopFsRelation, Seq[SourceFile], Long) = {
    val location = s.paths.head
    val version = currentVersion(spark, location)
    val rel = SourceResolver.relation(dataFrame(spark, location, Some(version)), s.display)
    val files = rel.location.listFiles(Nil, Nil).flatMap(_.files).map { f =>
      SourceFile(SourceResolver.normalize(f.getPath), f.getLen, f.getModificationTime)
    }.distinct
    (rel, files, version)
  }
}
