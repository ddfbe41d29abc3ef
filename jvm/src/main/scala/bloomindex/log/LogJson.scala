package bloomindex.log

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.core.StreamReadConstraints
import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.{JsonNodeFactory, ObjectNode}

import bloomindex.filter.FilterAlgorithm
import bloomindex.sbbf.SbbfSizing.Sizing
import bloomindex.text.TextFilterSpec

/**
 * Log entries as JSON, read with an explicit schema: every field is checked for presence and
 * type, and an entry of a format version this code does not know is refused (a newer writer
 * may have changed the meaning of fields). No Java serialization anywhere.
 */
object LogJson {

  /**
   * 2: ACTIVE data records its decoding context. Entries of format 1 are read (without one: no
   * query uses their data until a full refresh).
   * 3: the data's `layout` ([[IndexData]]): one folder per column and a summary. Entries of
   * format 1 and 2 are read with the layout they had (`rows`), and their data is read as
   * before.
   * 4: the `blocks` layout ([[IndexData.Blocks]]): `columns` plus each column's filters
   * block-major. Entries of format 3 (`columns`) are read as before.
   * 5: the `probes` layout ([[IndexData.Probes]]): the filters in probe files only, no Parquet
   * rows. Entries of format 4 (`blocks`) are read as before, and REFRESH writes `probes`. This
   * build writes 5, which older builds refuse (an index it writes may still have the `columns`
   * layout: encrypted).
   * 6: checksums ([[Checksums]]): each entry ends with its CRC32C, and data written with
   * checksums says so (`data.checksums`): its summary, probe files and global filters carry
   * them too, and readers require them. Entries of format 5 and before are read as before.
   */
  val FormatVersion = 6
  /** The first format whose entries are sealed with a checksum ([[Checksums.seal]]). */
  val ChecksumsSince = 6
  val OldestReadable = 1
  val MaxEntryBytes: Int = 1 << 20

  private val mapper = {
    val m = new ObjectMapper()
    m.getFactory.setStreamReadConstraints(
      StreamReadConstraints.builder().maxNestingDepth(32).maxStringLength(MaxEntryBytes).build())
    m
  }
  private val nodes = JsonNodeFactory.instance

  /** Thrown for an entry that is not a valid log entry of a version we can read. */
  class InvalidLogEntryException(msg: String) extends RuntimeException(msg)

  /**
   * An entry of a newer format: not damage, a newer writer. Readers and commands stop there
   * rather than skip it (this build cannot know what it means, nor commit after it).
   */
  class NewerFormatException(msg: String) extends InvalidLogEntryException(msg)

  def write(e: LogEntry): String = {
    val o = nodes.objectNode()
    o.put("formatVersion", FormatVersion)
    o.put("version", e.version)
    o.put("state", e.state)
    o.put("operation", e.operation)
    o.put("operationId", e.operationId)
    o.put("timestamp", e.timestamp)
    o.put("createdAt", e.createdAt)
    o.set[JsonNode]("spec", specJson(e.spec))
    e.data.foreach(d => o.set[JsonNode]("data", dataJson(d)))
    Checksums.seal(mapper.writeValueAsString(o))
  }

  private def specJson(s: IndexSpec): ObjectNode = {
    val o = nodes.objectNode()
    o.put("name", s.name)
    o.put("global", s.global)
    if (s.allowUnencrypted) o.put("allowUnencryptedIndex", true)
    if (s.refresh != RefreshMode.Manual) o.put("refresh", s.refresh.name)
    val src = o.putObject("source")
    s.source.table.foreach(src.put("table", _))
    src.put("format", s.source.format)
    val paths = src.putArray("paths")
    s.source.paths.foreach(paths.add)
    val opts = src.putObject("options")
    s.source.options.toSeq.sortBy(_._1).foreach { case (k, v) => opts.put(k, v) }
    val parts = src.putArray("partitionColumns")
    s.source.partitionColumns.foreach(parts.add)
    val cols = o.putArray("columns")
    s.columns.foreach { c =>
      val co = cols.addObject()
      co.put("name", c.name)
      co.put("type", c.dataType)
      co.put("fpp", c.fpp)
      if (c.fppAuto) co.put("fppAuto", true)
      c.ndv.foreach(co.put("ndv", _))
      co.put("sizing", c.sizing.name)
      co.put("algorithm", c.algorithm.name)
      c.text.foreach { t =>
        val to = co.putObject("text")
        to.put("source", t.source)
        to.put("settings", t.spec.settings)
      }
    }
    o
  }

  private def dataJson(d: IndexData): ObjectNode = {
    val o = nodes.objectNode()
    o.put("dir", d.dir)
    o.put("indexedFiles", d.indexedFiles)
    o.put("indexedBytes", d.indexedBytes)
    o.put("filterBytes", d.filterBytes)
    o.put("filesFromFooters", d.filesFromFooters)
    val g = o.putObject("globalNdv")
    d.globalNdv.toSeq.sortBy(_._1).foreach { case (k, v) => g.put(k, v) }
    d.tableVersion.foreach(o.put("tableVersion", _))
    d.decoding.foreach(x => o.set[JsonNode]("decoding", decodingJson(x)))
    o.put("layout", d.layout)
    if (d.reused.nonEmpty) {
      val r = o.putArray("reused")
      d.reused.foreach(r.add)
    }
    if (d.checksums) o.put("checksums", true)
    o
  }

  private def stringMap(o: ObjectNode, name: String, m: Map[String, String]): Unit = {
    val n = o.putObject(name)
    m.toSeq.sortBy(_._1).foreach { case (k, v) => n.put(k, v) }
  }

  private def decodingJson(d: Decoding): ObjectNode = {
    val o = nodes.objectNode()
    o.put("format", d.format)
    val cols = o.putArray("columns")
    d.columns.foreach { c =>
      val co = cols.addObject()
      co.put("name", c.name)
      co.put("type", c.dataType)
      stringMap(co, "physical", c.physical)
      stringMap(co, "settings", c.settings)
      stringMap(co, "options", c.options)
    }
    o
  }

  private def readStringMap(o: JsonNode, name: String): Map[String, String] =
    obj(o, name).properties().asScala.map(e => e.getKey -> text(e.getValue, s"$name.${e.getKey}")).toMap

  private def readDecoding(o: JsonNode): Decoding = {
    if (!o.isObject) fail("decoding is not an object")
    Decoding(str(o, "format"), arr(o, "columns").map { c =>
      ColumnDecoding(str(c, "name"), str(c, "type"), readStringMap(c, "physical"), readStringMap(c, "settings"),
        readStringMap(c, "options"))
    })
  }

  def read(json: String): LogEntry = {
    if (json.length > MaxEntryBytes) fail(s"entry of ${json.length} characters is too large")
    val root = try mapper.readTree(json) catch {
      case e: Exception => fail(s"not valid JSON (${e.getMessage.linesIterator.next()})")
    }
    if (root == null || !root.isObject) fail("not a JSON object")
    val fv = long(root, "formatVersion")
    // Format 6 on: the entry's checksum, required (a checksum present is checked whatever the
    // version says: a damaged version number is caught too).
    try Checksums.verify(json, fv >= ChecksumsSince, "the entry") catch { case e: Checksums.Mismatch => fail(e.getMessage) }
    if (fv > FormatVersion) throw new NewerFormatException(
      s"format version $fv is not supported (this build reads $FormatVersion): written by a newer bloomindex")
    if (fv < OldestReadable) fail(s"format version $fv is not supported (this build reads $OldestReadable to $FormatVersion)")
    val state = str(root, "state")
    if (!IndexState.all.contains(state)) fail(s"unknown state '$state'")
    LogEntry(
      version = long(root, "version"),
      state = state,
      operation = str(root, "operation"),
      operationId = str(root, "operationId"),
      timestamp = long(root, "timestamp"),
      createdAt = long(root, "createdAt"),
      spec = readSpec(obj(root, "spec")),
      data = Option(root.get("data")).filterNot(_.isNull).map(readData(_, fv)))
  }

  private def readSpec(o: JsonNode): IndexSpec = {
    val src = obj(o, "source")
    val source = SourceSpec(
      table = optStr(src, "table"),
      format = str(src, "format"),
      paths = arr(src, "paths").map(n => text(n, "paths[]")),
      options = obj(src, "options").properties().asScala.map(e => e.getKey -> text(e.getValue, e.getKey)).toMap,
      partitionColumns = arr(src, "partitionColumns").map(n => text(n, "partitionColumns[]")))
    val columns = arr(o, "columns").map { c =>
      ColumnSpec(str(c, "name"), str(c, "type"), double(c, "fpp"),
        Option(c.get("ndv")).filterNot(_.isNull).map(n => if (n.canConvertToLong) n.asLong else fail("ndv is not a number")),
        try Sizing.fromName(str(c, "sizing")) catch { case e: IllegalArgumentException => fail(e.getMessage) },
        // Entries written before there was a choice of design have no field: theirs is sbbf.
        optStr(c, "algorithm").map { a =>
          try FilterAlgorithm.fromName(a) catch { case e: IllegalArgumentException => fail(e.getMessage) }
        }.getOrElse(FilterAlgorithm.Default),
        Option(c.get("text")).filterNot(_.isNull).map { t =>
          val spec = try TextFilterSpec.parse(str(t, "settings")) catch { case e: IllegalArgumentException => fail(e.getMessage) }
          TextColumn(str(t, "source"), spec)
        },
        // Entries written before `fpp = 'auto'` existed, and fixed rates, have no field.
        Option(c.get("fppAuto")).filterNot(_.isNull).exists { n =>
          if (n.isBoolean) n.asBoolean else fail("fppAuto is not a boolean")
        })
    }
    if (columns.isEmpty) fail("an index without columns")
    // Entries written before the option existed have no field: false.
    val allowUnencrypted = Option(o.get("allowUnencryptedIndex")).filterNot(_.isNull).exists { n =>
      if (n.isBoolean) n.asBoolean else fail("allowUnencryptedIndex is not a boolean")
    }
    // Entries written before the option existed, and manual indexes, have no field.
    val refresh = optStr(o, "refresh").map { r =>
      try RefreshMode.fromName(r) catch { case e: IllegalArgumentException => fail(e.getMessage) }
    }.getOrElse(RefreshMode.Manual)
    IndexSpec(str(o, "name"), source, columns, bool(o, "global"), allowUnencrypted, refresh)
  }

  private def readData(o: JsonNode, formatVersion: Long): IndexData = {
    if (!o.isObject) fail("data is not an object")
    IndexData(str(o, "dir"), long(o, "indexedFiles"), long(o, "indexedBytes"), long(o, "filterBytes"),
      long(o, "filesFromFooters"),
      obj(o, "globalNdv").properties().asScala.map(e => e.getKey -> {
        if (e.getValue.canConvertToLong) e.getValue.asLong else fail(s"globalNdv.${e.getKey} is not a number")
      }).toMap,
      // Optional (added for table formats' versions): entries written before it have none.
      Option(o.get("tableVersion")).filterNot(_.isNull).map(_ => long(o, "tableVersion")),
      // Format 2 on: how the build decoded each column. Format 1 entries have none.
      Option(o.get("decoding")).filterNot(_.isNull).map(readDecoding),
      // Format 3 on: the layout is recorded; before, every entry's data had one.
      if (formatVersion < 3) IndexData.Rows else {
        val l = str(o, "layout")
        if (!IndexData.all.contains(l)) fail(s"unknown data layout '$l'")
        if ((l == IndexData.Blocks && formatVersion < 4) || (l == IndexData.Probes && formatVersion < 5)) {
          fail(s"layout '$l' in a format $formatVersion entry")
        }
        l
      },
      // Optional (added with incremental refreshes that keep probe files): none before.
      Option(o.get("reused")).filterNot(_.isNull).map { r =>
        if (!r.isArray) fail("data.reused is not an array")
        r.elements().asScala.map { x =>
          val d = text(x, "data.reused")
          if (!d.matches("data/[A-Za-z0-9_-]+")) fail(s"data.reused: '$d' is not a data folder")
          d
        }.toSeq
      }.getOrElse(Nil),
      // Format 6 on: the data carries checksums (data committed again from an older version does not).
      formatVersion >= ChecksumsSince && Option(o.get("checksums")).filterNot(_.isNull).exists { n =>
        if (n.isBoolean) n.asBoolean else fail("data.checksums is not a boolean")
      })
  }

  private def fail(msg: String): Nothing = throw new InvalidLogEntryException(msg)

  private def field(o: JsonNode, name: String): JsonNode = {
    val n = o.get(name)
    if (n == null || n.isNull) fail(s"missing field '$name'")
    n
  }
  private def text(n: JsonNode, name: String): String = if (n.isTextual) n.asText else fail(s"'$name' is not a string")
  private def str(o: JsonNode, name: String): String = text(field(o, name), name)
  private def optStr(o: JsonNode, name: String): Option[String] = Option(o.get(name)).filterNot(_.isNull).map(text(_, name))
  private def long(o: JsonNode, name: String): Long = {
    val n = field(o, name)
    if (n.isIntegralNumber && n.canConvertToLong) n.asLong else fail(s"'$name' is not an integer")
  }
  private def double(o: JsonNode, name: String): Double = {
    val n = field(o, name)
    if (n.isNumber) n.asDouble else fail(s"'$name' is not a number")
  }
  private def bool(o: JsonNode, name: String): Boolean = {
    val n = field(o, name)
    if (n.isBoolean) n.asBoolean else fail(s"'$name' is not a boolean")
  }
  private def obj(o: JsonNode, name: String): JsonNode = {
    val n = field(o, name)
    if (n.isObject) n else fail(s"'$name' is not an object")
  }
  private def arr(o: JsonNode, name: String): Seq[JsonNode] = {
    val n = field(o, name)
    if (n.isArray) n.elements().asScala.toSeq else fail(s"'$name' is not an array")
  }
}
