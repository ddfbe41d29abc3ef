package bloomindex.source

import java.nio.file.Files

import scala.jdk.CollectionConverters._

import bloomindex.testing.{TempDirs, TestSpark}

import org.apache.hadoop.fs.Path
import org.apache.parquet.example.data.simple.SimpleGroupFactory
import org.apache.parquet.hadoop.example.ExampleParquetWriter
import org.apache.parquet.schema.MessageTypeParser
import org.apache.spark.sql.SparkSession
import org.scalatest.funsuite.AnyFunSuite

/** Which files' own metadata makes Spark rebase their timestamps in the JVM's zone, asked on the driver and in a job. */
class LegacyRebaseSuite extends AnyFunSuite {

  private lazy val spark: SparkSession = TestSpark.session

  private def files(dir: String, suffix: String): Seq[SourceFile] = {
    val p = new Path(dir)
    p.getFileSystem(spark.sessionState.newHadoopConf()).listStatus(p).toSeq
      .filter(_.getPath.getName.endsWith(suffix)).sortBy(_.getPath.getName)
      .map(s => SourceFile(s.getPath.toString, s.getLen, s.getModificationTime))
  }

  /** A Parquet file of parquet-java's example writer (one INT64 column) with `meta` as its key-value metadata. */
  private def parquetWith(path: String, meta: Map[String, String]): Unit = {
    val schema = MessageTypeParser.parseMessageType("message m { required int64 ts (TIMESTAMP(MICROS,true)); }")
    val w = ExampleParquetWriter.builder(new Path(path)).withType(schema).withExtraMetaData(meta.asJava)
      .withConf(spark.sessionState.newHadoopConf()).build()
    try w.write(new SimpleGroupFactory(schema).newGroup().append("ts", -14827388400000000L)) finally w.close()
  }

  /** An Avro file of Avro's own writer with `meta` in its header. */
  private def avroWith(path: String, meta: Map[String, String]): Unit = {
    val schema = new org.apache.avro.Schema.Parser().parse(
      """{"type": "record", "name": "r", "fields": [{"name": "ts", "type": {"type": "long", "logicalType": "timestamp-micros"}}]}""")
    val w = new org.apache.avro.file.DataFileWriter[org.apache.avro.generic.GenericRecord](
      new org.apache.avro.generic.GenericDatumWriter[org.apache.avro.generic.GenericRecord](schema))
    meta.foreach { case (k, v) => w.setMeta(k, v) }
    w.create(schema, new java.io.File(path))
    val r = new org.apache.avro.generic.GenericData.Record(schema)
    r.put("ts", -14827388400000000L)
    try w.append(r) finally w.close()
  }

  private val spark24 = Map("org.apache.spark.version" -> "2.4.5")

  test("Parquet: a file of Spark 2.4 without a zone is found among many, on the driver and in a job; zone-keyed ones are not") {
    val dir = TempDirs.create("bloomindex-legacy").resolve("p").toString
    // 40 files of this Spark (CORRECTED), and one it wrote LEGACY (which records the session's zone).
    spark.range(0, 40, 1, 40).selectExpr("timestamp_seconds(id) AS ts").write.parquet(dir)
    spark.conf.set("spark.sql.parquet.datetimeRebaseModeInWrite", "LEGACY")
    try spark.sql("SELECT TIMESTAMP'1500-01-01 00:00:00' AS ts").write.mode("append").parquet(dir)
    finally spark.conf.unset("spark.sql.parquet.datetimeRebaseModeInWrite")
    val current = files(dir, ".parquet")
    assert(current.size == 41)
    assert(!LegacyRebase.anyRebasedInJvmZone(spark, "parquet", current ++ current))  // a job (over 64 files)
    assert(!LegacyRebase.anyRebasedInJvmZone(spark, "parquet", current.take(5))) // on the driver
    parquetWith(s"$dir/zz-spark24-zoned.parquet", spark24 + ("org.apache.spark.timeZone" -> "UTC"))
    assert(!LegacyRebase.anyRebasedInJvmZone(spark, "parquet", files(dir, ".parquet") ++ current))
    parquetWith(s"$dir/zz-spark24.parquet", spark24)
    val all = files(dir, ".parquet")
    assert(LegacyRebase.anyRebasedInJvmZone(spark, "parquet", current ++ all))  // a job
    assert(LegacyRebase.anyRebasedInJvmZone(spark, "parquet", all.takeRight(3)))
    // A file whose footer cannot be read counts as marked; another format is not asked.
    Files.write(java.nio.file.Paths.get(s"$dir-broken.parquet"), Array.fill[Byte](64)(7))
    val broken = SourceFile(new Path(s"$dir-broken.parquet").toUri.toString, 64L, 0L)
    assert(LegacyRebase.anyRebasedInJvmZone(spark, "parquet", Seq(broken)))
    assert(LegacyRebase.anyRebasedInJvmZone(spark, "orc", current.take(1)))
  }

  test("Avro: a file Spark 3.0 marked legacy without a zone is found, one of Avro's own writer is not") {
    val dir = TempDirs.create("bloomindex-legacy").resolve("a")
    Files.createDirectories(dir)
    for (i <- 0 until 70) avroWith(s"$dir/part-$i.avro", Map.empty)
    assert(!LegacyRebase.anyRebasedInJvmZone(spark, "avro", files(dir.toString, ".avro")))
    avroWith(s"$dir/zz-marked.avro", Map("org.apache.spark.version" -> "3.0.3", "org.apache.spark.legacyDateTime" -> ""))
    assert(LegacyRebase.anyRebasedInJvmZone(spark, "avro", files(dir.toString, ".avro")))
    assert(LegacyRebase.anyRebasedInJvmZone(spark, "avro", files(dir.toString, ".avro").takeRight(1)))
  }
}
