package bloomindex.source

/** A source as a statement names it: a (possibly qualified) table, or `format.`path``. */
case class SourceRef(parts: Seq[String]) {
  def sql: String = parts.map(p => if (p.matches("[A-Za-z_][A-Za-z0-9_]*")) p else s"`${p.replace("`", "``")}`").mkString(".")
}
