package bloomindex.log

import java.util.Locale

import bloomindex.filter.FilterAlgorithm
import bloomindex.sbbf.SbbfSizing.Sizing
import bloomindex.text.{TextFilterSpec, TextKind}

/**
 * One indexed column: its name, its Spark type (DDL), sizing and the Bloom filter design of
 * its filters (`sbbf` unless the index's options chose another).
 *
 * `fppAuto`: the column's rate is `fpp = 'auto'`, chosen by each build (CREATE, REFRESH) from
 * the files and the workload ([[bloomindex.advisor.FppModel]]); `fpp` is then the rate the
 * version's build chose (a placeholder in the transient entry before its first build), the one
 * its filters were sized for. Entries written before `auto` have no such field: a fixed rate.
 *
 * An equality filter's `name` is the source column's, as the source spells it. A text filter
 * (`text`: the tokens or n-grams of the source column's values, [[TextFilterSpec]]) is named
 * by its key, `<source column>#tokens` or `<source column>#ngrams<n>`, so one column may carry
 * an equality filter and text filters at once, each stored and loaded under its own name; no
 * source column has that name, so nothing that looks an indexed column up by a scan's column
 * name (equality pruning, join filters) ever finds a text filter.
 */
case class ColumnSpec(
    name: String,
    dataType: String,
    fpp: Double,
    ndv: Option[Long],
    sizing: Sizing,
    algorithm: FilterAlgorithm = FilterAlgorithm.Default,
    text: Option[TextColumn] = None,
    fppAuto: Boolean = false) {

  /** The source column the filter's values come from. */
  def sourceName: String = text.fold(name)(_.source)

  def isText: Boolean = text.isDefined

  /** How users see it: `user_id`, `message USING TOKENS`, `url USING NGRAMS(3)`. */
  def display: String = text.fold(name)(t => s"${t.source} USING ${t.kindSql}")
}

/** A text filter's source column and settings (see [[ColumnSpec]]). */
final case class TextColumn(source: String, spec: TextFilterSpec) {
  def kindSql: String = spec.kind match {
    case TextKind.Tokens(_) => "TOKENS"
    case TextKind.NGrams(n) => s"NGRAMS($n)"
  }
}

object TextColumn {
  /** The index column name of a text filter over `source` ([[ColumnSpec]]). */
  def key(source: String, kind: TextKind): String = kind match {
    case TextKind.Tokens(_) => s"$source#tokens"
    case TextKind.NGrams(n) => s"$source#ngrams$n"
  }
}

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
  /** The equality filter of source column `name` (case-insensitive), never a text filter. */
  def column(name: String): Option[ColumnSpec] =
    columns.find(c => !c.isText && c.name.toLowerCase(Locale.ROOT) == name.toLowerCase(Locale.ROOT))
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
