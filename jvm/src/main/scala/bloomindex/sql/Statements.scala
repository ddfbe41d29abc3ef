package bloomindex.sql

/** A source as a statement names it: a (possibly qualified) table, or `format.`path``. */
case class SourceRef(parts: Seq[String]) {
  def sql: String = parts.map(p => if (p.matches("[A-Za-z_][A-Za-z0-9_]*")) p else s"`${p.replace("`", "``")}`").mkString(".")
}

/** A column in FOR COLUMNS, with its own OPTIONS (raw key/value text, checked later). */
case class ColumnRequest(name: String, options: Map[String, String])
