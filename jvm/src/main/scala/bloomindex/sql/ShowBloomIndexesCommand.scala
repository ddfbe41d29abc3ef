package bloomindex.sql

import bloomindex.actions.IndexManager
import bloomindex.catalog.IndexCatalog
import bloomindex.log.IndexRoot
import bloomindex.source.{SourceRef, SourceResolver}

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.{LongType, StringType}

/**
 * `SHOW BLOOM INDEXES [ON source]`: one row per index that is not dropped; an index a newer
 * bloomindex wrote, with state NEWER_FORMAT (and no source nor columns: this build cannot read them).
 */
case class ShowBloomIndexesCommand(source: Option[SourceRef]) extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(
    AttributeReference("name", StringType, nullable = false)(),
    AttributeReference("source", StringType, nullable = false)(),
    AttributeReference("columns", StringType, nullable = false)(),
    AttributeReference("state", StringType, nullable = false)(),
    AttributeReference("version", LongType, nullable = false)(),
    AttributeReference("files_indexed", LongType, nullable = false)(),
    AttributeReference("bytes", LongType, nullable = false)())

  override def run(spark: SparkSession): Seq[Row] = {
    val manager = new IndexManager(spark)
    // Without a source, every index under the root, those a newer bloomindex wrote too (their
    // source and columns are in a log this build does not read). With one, only the indexes
    // this build can tell are on it.
    val listed = source match {
      case Some(ref) => new IndexCatalog(spark).indexesOn(SourceResolver.resolve(spark, ref)).map(Right(_))
      case None => manager.listed()
    }
    listed.map {
      case Right(listedEntry) =>
        val (e, state) = manager.shown(listedEntry)
        Row(e.spec.name, e.spec.source.display, e.spec.columns.map(_.display).mkString(", "), state, e.version,
          e.data.map(_.indexedFiles).getOrElse(0L), e.data.map(_.filterBytes).getOrElse(0L))
      case Left(newer) =>
        Row(newer.name, "", "", IndexRoot.NewerState, newer.version, 0L, 0L)
    }
  }
}
