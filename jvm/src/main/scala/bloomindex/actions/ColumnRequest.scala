package bloomindex.actions

/** A column in FOR COLUMNS, with its own OPTIONS (raw key/value text, checked later). */
case class ColumnRequest(name: String, options: Map[String, String])
