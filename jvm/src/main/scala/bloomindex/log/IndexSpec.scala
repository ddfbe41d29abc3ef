package bloomindex.log

import java.util.Locale

import bloomindex.filter.FilterAlgorithm
import bloomindex.sbbf.SbbfSizing.Sizing

/**
 * One indexed column: its name as the source spells it, its Spark type (DDL), sizing and
 * the Bloom filter design of its filters (`sbbf` unless the index's options chose another).
 */
case class ColumnSpec(
    name: String,
    dataType: String,
    fpp: Double,
    ndv: Option[Long],
    sizing: Sizing,
    algorithm: FilterAlgorithm = FilterAlgorithm.Default)

/**
 * Where the indexed files come from. `table` is set for catalog tables (qualified name);
 * `paths` are the root paths the source lists files under; `options` the reader options
 * (CSV headers and the like) needed to read them back.
 */
case class SourceSpec(
    table: Option[String],
    format: String,
    paths: Seq[String],
    options: Map[String, String],
    partitionColumns: Seq[String]) {

  /** How users name the source: the table, or `format.`path``. */
  def display: String = table.getOrElse(s"$format.`${paths.mkString(",")}`")
}

/**
 * What an index is: fixed at CREATE, carried by every log entry. `allowUnencrypted`: the
 * index may be stored unencrypted although source columns are encrypted ([[bloomindex.crypto.IndexEncryption]]).
 */
case class IndexSpec(name: String, source: SourceSpec, columns: Seq[ColumnSpec], global: Boolean,
    allowUnencrypted: Boolean = false, refresh: RefreshMode = RefreshMode.Manual) {
  def column(name: String): Option[ColumnSpec] =
    columns.find(_.name.toLowerCase(Locale.ROOT) == name.toLowerCase(Locale.ROOT))
}

/**
 * When an index follows its source's writes: `manual` (REFRESH BLOOM INDEX only), `on_write`
 * (a write through the session refreshes it right after its commit, in the writing thread), or
 * `background` (the same refresh queued to the driver's background refresher, coalescing
 * writes). See bloomindex.actions.WriteEvents.
 */
sealed abstract class RefreshMode(val name: String) {
  override def toString: String = name
}

object RefreshMode {
  case object Manual extends RefreshMode("manual")
  case object OnWrite extends RefreshMode("on_write")
  case object Background extends RefreshMode("background")

  val all: Seq[RefreshMode] = Seq(OnWrite, Background, Manual)

  /** By name, case and `_` / `-` / space insensitive (`on_write`, `ON WRITE`, `onWrite`). */
  def fromName(name: String): RefreshMode = {
    def norm(s: String) = s.toLowerCase(Locale.ROOT).replaceAll("[_\\s-]", "")
    all.find(m => norm(m.name) == norm(name)).getOrElse(
      throw new IllegalArgumentException(s"refresh: unknown mode '$name', expected one of ${all.map(m => s"'${m.name}'").mkString(", ")}"))
  }
}
