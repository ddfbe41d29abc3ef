package bloomindex.source

import org.apache.spark.sql.execution.datasources.{FileIndex, HadoopFsRelation, LogicalRelation}

/** A file index that narrows another's listing (our pruning wrappers). */
trait WrappingFileIndex extends FileIndex {
  def delegate: FileIndex
}

/** Our own wrappers around a scan's file index, seen through. */
object FileIndexes {
  def unwrap(index: FileIndex): FileIndex = index match {
    case b: WrappingFileIndex => unwrap(b.delegate)
    case other => other
  }
}
