package bloomindex.actions

import bloomindex.indexing.IndexBuilder
import bloomindex.layout.IndexStore
import bloomindex.crypto.IndexEncryption
import bloomindex.log.{IndexSpec, LogEntry}
import bloomindex.source.SourceResolver

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.DataFrame

/**
 * The build step CREATE and REFRESH share: the source's files as of now, how this session
 * decodes the indexed columns, then the build job over the files `base` does not hold as they
 * are now (all of them without a base), carrying the rows of the unchanged ones.
 */
private[actions] object IndexBuild {

  def run(ctx: ActionContext, spec: IndexSpec, dataDir: Path, base: Option[LogEntry], frame: Option[DataFrame]): Built = {
    val spark = ctx.spark
    val snapshot = SourceResolver.snapshot(spark, spec.source, frame)
    val (relation, current, tableVersion) = (snapshot.relation, snapshot.files, snapshot.version)
    val decoding = SourceResolver.decoding(spark, spec, relation)
    IndexEncryption.prepare(spark, spec, current, dataDir.toString)
    val baseData = base.flatMap(_.data)
    val (toBuild, carried) = baseData.map(d => IndexStore.rows(spark, ctx.log.indexDir, d)) match {
      case None => (current, None)
      case Some(rows) =>
        // The incremental file diff: files held as they are now, by every column, are carried;
        // the rest built (so a file whose row a damaged index file lost is built again).
        val known = IndexStore.fileIdentities(rows, spec.columns.size)
        val unchanged = current.filter(f => known.contains((f.path, f.size, f.modificationTime)))
        val keep = unchanged.map(_.path).toSet
        val changed = current.filterNot(f => keep.contains(f.path))
        val keepDf = spark.createDataFrame(unchanged.map(f => (f.path, f.size, f.modificationTime)))
          .toDF("file_path", "file_size", "modification_time")
        (changed, Some(rows.join(keepDf, Seq("file_path", "file_size", "modification_time"), "left_semi")))
    }
    val baseGlobal = if (!spec.global) Map.empty[String, Array[Byte]]
      else baseData.map(d => IndexStore.globalFilters(spark, ctx.log.indexDir, d)).getOrElse(Map.empty)
    val baseNdv = if (baseGlobal.isEmpty) Map.empty[String, Long] else baseData.map(_.globalNdv).getOrElse(Map.empty)
    // Files the build cannot read as the source does (its provider says which) are left out:
    // not indexed, read in full by queries.
    val (readRelation, readFiles) = SourceResolver.readable(spark, spec, relation, toBuild)
    val result = SourceResolver.buildScope(spark, spec.source) {
      IndexBuilder.build(spark, spec, readRelation, readFiles, dataDir.toString, carried, baseGlobal, baseNdv)
    }
    Built(result, tableVersion, decoding)
  }
}
