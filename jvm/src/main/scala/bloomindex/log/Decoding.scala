package bloomindex.log

/**
 * What decides the value a row's bytes become for one column of a scan: everything a filter's
 * values depend on besides the bytes themselves. Recorded per indexed column when an index is
 * built ([[Decoding]] in the log entry's data, by [[bloomindex.source.DecodingContext]]) and compared with the scan's at query time.
 *
 * @param name      the column exactly as the source's schema spells it (case included)
 * @param dataType  its Spark type, as DDL
 * @param physical  where the format stores it, when that is not simply `name`: for Delta
 *                  column mapping `physicalName` and `fieldId`; for Parquet field ids `fieldId`
 * @param settings  the session settings that change this format's decoding of this type,
 *                  with their effective values ([[bloomindex.source.DecodingContext.settingsFor]])
 * @param options   the reader options that may change this column's values (lower-case keys)
 */
final case class ColumnDecoding(
    name: String,
    dataType: String,
    physical: Map[String, String],
    settings: Map[String, String],
    options: Map[String, String])

/** The decoding context of an index version (or of a scan): the format, and per column. */
final case class Decoding(format: String, columns: Seq[ColumnDecoding]) {
  def column(name: String): Option[ColumnDecoding] = columns.find(_.name == name)
}
