package bloomindex.actions

/**
 * A column in FOR COLUMNS, with its own OPTIONS (raw key/value text, checked later) and, for a
 * text filter, its kind as written after USING: `tokens` or `ngrams(n)` (checked at CREATE).
 */
case class ColumnRequest(name: String, options: Map[String, String], using: Option[String] = None)
