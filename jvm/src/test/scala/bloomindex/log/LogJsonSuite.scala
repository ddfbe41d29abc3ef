package bloomindex.log

import bloomindex.crypto.IndexCryptoFactory
import bloomindex.filter.FilterAlgorithm
import bloomindex.sbbf.SbbfSizing.Sizing

import org.scalatest.funsuite.AnyFunSuite

class LogJsonSuite extends AnyFunSuite {

  /**
   * The JSON schema's tests edit entries' text: they see it without its checksum, and it is
   * sealed again before it is read (the checksums' own tests are at the end).
   */
  private object LogJson {
    def write(e: LogEntry): String = Checksums.strip(bloomindex.log.LogJson.write(e))
    def read(s: String): LogEntry = {
      val t = s.trim
      bloomindex.log.LogJson.read(if (t.startsWith("{") && t.endsWith("}") && t.length > 2) Checksums.seal(t) else s)
    }
    type InvalidLogEntryException = bloomindex.log.LogJson.InvalidLogEntryException
  }

  private val entry = LogEntry(3, IndexState.Active, "CREATE", "op", 10L, 5L,
    IndexSpec("i", SourceSpec(Some("db.t"), "csv", Seq("file:/x"), Map("header" -> "true"), Seq("p")),
      Seq(ColumnSpec("a", "BIGINT", 0.01, Some(100L), Sizing.Exact, FilterAlgorithm.Classic),
        ColumnSpec("b", "STRING", 0.1, None, Sizing.PowerOfTwo)),
      global = true),
    Some(IndexData("data/op", 2, 300, 64, 0, Map("a" -> 7L))))

  test("round trip") {
    assert(LogJson.read(LogJson.write(entry)) == entry)
    val noData = entry.copy(state = IndexState.Creating, data = None)
    assert(LogJson.read(LogJson.write(noData)) == noData)
    val delta = entry.copy(data = entry.data.map(_.copy(tableVersion = Some(12L))))
    assert(LogJson.read(LogJson.write(delta)) == delta)
  }

  test("the refresh mode: written unless manual, entries without it read as manual, an unknown one refused") {
    val onWrite = entry.copy(spec = entry.spec.copy(refresh = RefreshMode.OnWrite))
    assert(LogJson.write(onWrite).contains("\"refresh\":\"on_write\""))
    assert(LogJson.read(LogJson.write(onWrite)) == onWrite)
    val background = entry.copy(spec = entry.spec.copy(refresh = RefreshMode.Background))
    assert(LogJson.read(LogJson.write(background)) == background)
    assert(!LogJson.write(entry).contains("refresh") && LogJson.read(LogJson.write(entry)).spec.refresh == RefreshMode.Manual)
    val bad = LogJson.write(onWrite).replace("\"on_write\"", "\"sometimes\"")
    assert(intercept[LogJson.InvalidLogEntryException](LogJson.read(bad)).getMessage.contains("unknown mode 'sometimes'"))
    assert(Seq("on_write", "ON WRITE", "onWrite", "on-write").map(RefreshMode.fromName).toSet == Set(RefreshMode.OnWrite))
  }

  test("entries written before tableVersion existed stay readable") {
    val json = LogJson.write(entry)
    assert(!json.contains("tableVersion"))
    assert(LogJson.read(json).data.get.tableVersion.isEmpty)
    val bad = json.replace("\"globalNdv\":{", "\"tableVersion\":\"x\",\"globalNdv\":{")
    assert(intercept[LogJson.InvalidLogEntryException](LogJson.read(bad)).getMessage.contains("'tableVersion' is not an integer"))
  }

  test("a future format version, damage and wrong types are refused with a clear message") {
    val json = LogJson.write(entry)
    def err(s: String): String = intercept[LogJson.InvalidLogEntryException](LogJson.read(s)).getMessage
    assert(err(json.replace("\"formatVersion\":6", "\"formatVersion\":7")).contains("format version 7"))
    assert(err(json.replace("\"formatVersion\":6", "\"formatVersion\":0")).contains("format version 0"))
    assert(err(json.take(json.length / 2)).contains("not valid JSON"))
    assert(err(json.replace("\"state\":\"ACTIVE\"", "\"state\":\"DONE\"")).contains("unknown state"))
    assert(err(json.replace("\"version\":3", "\"version\":\"3\"")).contains("'version' is not an integer"))
    assert(err(json.replace("\"columns\":[", "\"columnz\":[")).contains("missing field 'columns'"))
    assert(err("[]").contains("not a JSON object"))
    assert(err("{" * 100000).nonEmpty)
  }

  private val decoding = Decoding("csv", Seq(
    ColumnDecoding("a", "BIGINT", Map.empty, Map.empty, Map("header" -> "true")),
    ColumnDecoding("b", "TIMESTAMP", Map("physicalName" -> "col-1", "fieldId" -> "4"),
      Map("spark.sql.session.timeZone" -> "UTC"), Map("timestampformat" -> "yyyy"))))

  test("the decoding context of the data round-trips; format 1 entries (none recorded) stay readable") {
    val withDecoding = entry.copy(data = entry.data.map(_.copy(decoding = Some(decoding))))
    val json = LogJson.write(withDecoding)
    assert(json.contains("\"formatVersion\":6") && json.contains("\"decoding\":{"))
    assert(LogJson.read(json) == withDecoding)
    val v1 = LogJson.write(entry).replace("\"formatVersion\":6", "\"formatVersion\":1").replace(",\"layout\":\"columns\"", "")
    assert(LogJson.read(v1) == entry.copy(data = entry.data.map(_.copy(layout = IndexData.Rows))))
    assert(LogJson.read(v1).data.get.decoding.isEmpty)
    assert(intercept[LogJson.InvalidLogEntryException](LogJson.read(json.replace("\"settings\":{\"spark", "\"settings\":{\"x\":1,\"spark")))
      .getMessage.contains("'settings.x' is not a string"))
  }

  test("format 6 writes the probes layout; format 4 entries read with blocks, format 3 with columns, never newer") {
    val probes = entry.copy(data = entry.data.map(_.copy(layout = IndexData.Probes)))
    val json = LogJson.write(probes)
    assert(json.contains("\"formatVersion\":6") && json.contains("\"layout\":\"probes\""))
    assert(LogJson.read(json) == probes)
    val blocks = entry.copy(data = entry.data.map(_.copy(layout = IndexData.Blocks)))
    val v4 = LogJson.write(blocks).replace("\"formatVersion\":6", "\"formatVersion\":4")
    assert(LogJson.read(v4) == blocks)
    val v3 = LogJson.write(entry).replace("\"formatVersion\":6", "\"formatVersion\":3")
    assert(LogJson.read(v3).data.get.layout == IndexData.Columns)
    def err(s: String): String = intercept[LogJson.InvalidLogEntryException](LogJson.read(s)).getMessage
    assert(err(json.replace("\"formatVersion\":6", "\"formatVersion\":4")).contains("layout 'probes' in a format 4 entry"))
    assert(err(v4.replace("\"formatVersion\":4", "\"formatVersion\":3")).contains("layout 'blocks' in a format 3 entry"))
  }

  test("format 3 records the data's layout; format 1 and 2 entries read as the rows layout; others are refused") {
    val json = LogJson.write(entry)
    assert(json.contains("\"formatVersion\":6") && json.contains("\"layout\":\"columns\""))
    assert(LogJson.read(json).data.get.layout == IndexData.Columns)
    val v2 = json.replace("\"formatVersion\":6", "\"formatVersion\":2").replace(",\"layout\":\"columns\"", "")
    assert(LogJson.read(v2).data.get.layout == IndexData.Rows)
    // A format 2 entry's data had one layout, whatever such a field might say.
    assert(LogJson.read(json.replace("\"formatVersion\":6", "\"formatVersion\":2")).data.get.layout == IndexData.Rows)
    def err(s: String): String = intercept[LogJson.InvalidLogEntryException](LogJson.read(s)).getMessage
    assert(err(json.replace(",\"layout\":\"columns\"", "")).contains("missing field 'layout'"))
    assert(err(json.replace("\"layout\":\"columns\"", "\"layout\":\"block-major\"")).contains("unknown data layout 'block-major'"))
    assert(err(json.replace("\"layout\":\"columns\"", "\"layout\":7")).contains("'layout' is not a string"))
  }

  test("each column's filter design is written; entries without one (older writers) mean sbbf") {
    val json = LogJson.write(entry)
    assert(json.contains("\"algorithm\":\"classic\"") && json.contains("\"algorithm\":\"sbbf\""))
    val old = json.replace(",\"algorithm\":\"classic\"", "").replace(",\"algorithm\":\"sbbf\"", "")
    assert(!old.contains("algorithm"))
    assert(LogJson.read(old).spec.columns.map(_.algorithm) == Seq(FilterAlgorithm.SplitBlock, FilterAlgorithm.SplitBlock))
    val murmur = entry.copy(spec = entry.spec.copy(columns =
      entry.spec.columns.map(_.copy(algorithm = FilterAlgorithm.SplitBlockMurmur3))))
    assert(LogJson.read(LogJson.write(murmur)) == murmur)
    val e = intercept[LogJson.InvalidLogEntryException](LogJson.read(json.replace("\"classic\"", "\"cuckoo\"")))
    assert(e.getMessage.contains("cuckoo"))
    assert(intercept[LogJson.InvalidLogEntryException](LogJson.read(json.replace("\"classic\"", "7")))
      .getMessage.contains("'algorithm' is not a string"))
  }

  test("allow_unencrypted_index is kept; entries without the field mean false") {
    assert(!LogJson.write(entry).contains("allowUnencryptedIndex"))
    val allowed = entry.copy(spec = entry.spec.copy(allowUnencrypted = true))
    val json = LogJson.write(allowed)
    assert(json.contains("\"allowUnencryptedIndex\":true"))
    assert(LogJson.read(json) == allowed)
    assert(intercept[LogJson.InvalidLogEntryException](LogJson.read(json.replace("\"allowUnencryptedIndex\":true",
      "\"allowUnencryptedIndex\":\"yes\""))).getMessage.contains("allowUnencryptedIndex"))
  }

  test("fpp = 'auto' is kept with the rate chosen; entries without the field (older writers, fixed rates) read as fixed") {
    assert(!LogJson.write(entry).contains("fppAuto"))
    assert(LogJson.read(LogJson.write(entry)).spec.columns.forall(!_.fppAuto))
    val auto = entry.copy(spec = entry.spec.copy(columns = entry.spec.columns.map(_.copy(fpp = 0.000123, fppAuto = true))))
    val json = LogJson.write(auto)
    assert(json.contains("\"fppAuto\":true") && json.contains("\"fpp\":1.23E-4"))
    assert(LogJson.read(json) == auto)
    assert(intercept[LogJson.InvalidLogEntryException](LogJson.read(json.replace("\"fppAuto\":true", "\"fppAuto\":\"yes\"")))
      .getMessage.contains("fppAuto"))
  }

  test("index writer crypto options: column keys survive any column name") {
    val keys = Map("a" -> "k1", "we=ird&name" -> "k 2", "é" -> "k3")
    assert(IndexCryptoFactory.decodeKeys(IndexCryptoFactory.encodeKeys(keys)) == keys)
    assert(IndexCryptoFactory.decodeKeys("") == Map.empty)
  }

  test("format 6: every entry is sealed with its CRC32C; any change to its text is refused, older entries need none") {
    val real = bloomindex.log.LogJson
    val withData = entry.copy(data = entry.data.map(_.copy(layout = IndexData.Probes, checksums = true)))
    val json = real.write(withData)
    assert(json.matches("(?s)\\{.*,\"crc32c\":\"[0-9a-f]{8}\"\\}") && json.contains("\"checksums\":true"))
    assert(real.read(json) == withData && real.read(json).data.get.checksums)
    def err(s: String): String = intercept[real.InvalidLogEntryException](real.read(s)).getMessage
    // Every single bit of the entry flipped: refused (as damage, never as a newer format), or not valid JSON.
    val bytes = json.getBytes("UTF-8")
    var refused = 0
    for (i <- bytes.indices; bit <- 0 until 8) {
      val b = bytes.clone()
      b(i) = (b(i) ^ (1 << bit)).toByte
      val e = intercept[real.InvalidLogEntryException](real.read(new String(b, "UTF-8")))
      assert(!e.isInstanceOf[real.NewerFormatException], s"byte $i bit $bit: ${e.getMessage}")
      refused += 1
    }
    assert(refused == bytes.length * 8)
    assert(err(json.replace("\"formatVersion\":6", "\"formatVersion\":7")).contains("checksum"))
    assert(err(Checksums.strip(json)).contains("no valid checksum"))
    // A newer writer's entry (sealed) is a newer format, not damage.
    val newer = Checksums.seal(Checksums.strip(json).replace("\"formatVersion\":6", "\"formatVersion\":7"))
    assert(intercept[real.NewerFormatException](real.read(newer)).getMessage.contains("format version 7"))
    // Format 5 entries carry none and are read as before; their data has no checksums whatever it says.
    val v5 = Checksums.strip(json).replace("\"formatVersion\":6", "\"formatVersion\":5")
    assert(real.read(v5).data.get.layout == IndexData.Probes && !real.read(v5).data.get.checksums)
  }

  test("sealed documents: the field is the last one, found before parsing; strip gives the document back") {
    val doc = "{\"a\":1,\"b\":[1,2]}"
    val sealedDoc = Checksums.seal(doc)
    assert(Checksums.unseal(sealedDoc).contains(true) && Checksums.strip(sealedDoc) == doc)
    assert(Checksums.unseal(doc).isEmpty && Checksums.unseal(sealedDoc.replace("[1,2]", "[1,3]")).contains(false))
    Checksums.verify(doc, required = false, "doc")
    assert(intercept[Checksums.Mismatch](Checksums.verify(doc, required = true, "doc")).getMessage.contains("no valid checksum"))
    assert(intercept[Checksums.Mismatch](Checksums.verify(sealedDoc.replace("crc32c\":\"", "crc32c\":\"x"), required = false, "doc"))
      .getMessage.contains("no valid checksum"))
    assert(Checksums.crc32c("123456789".getBytes("US-ASCII")) == 0xe3069283)
  }
}
