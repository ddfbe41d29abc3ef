package bloomindex.compat

import bloomindex.BloomIndexKryoRegistrator
import bloomindex.filter.FilterAlgorithm
import bloomindex.indexing.{DistinctHashes, DistinctPass, FileFilter, FooterFilters}
import bloomindex.layout.{IndexFiles, IndexRow}
import bloomindex.source.SourceFile
import bloomindex.source.iceberg.IcebergParquetFormat

import org.apache.hadoop.conf.Configuration
import org.apache.spark.SparkConf
import org.apache.spark.serializer.KryoSerializer
import org.scalatest.funsuite.AnyFunSuite

/**
 * Under `spark.kryo.registrationRequired=true` Kryo refuses every class not registered: with
 * [[BloomIndexKryoRegistrator]] each class bloomindex sends through `spark.serializer` (and
 * what it holds) arrives whole; without it the session says what to set ([[KryoSetup]]).
 */
class KryoRegistrationSuite extends AnyFunSuite {

  private def kryo(registrators: String*): KryoSerializer = new KryoSerializer(new SparkConf()
    .set("spark.kryo.registrationRequired", "true")
    .set("spark.kryo.registrator", registrators.mkString(",")))

  private def hashes(values: Long*): DistinctHashes = {
    val d = new DistinctHashes(new DistinctHashes.Scratch)
    d.add(values.toArray, 0, values.size)
    d
  }

  private def keys(d: DistinctHashes): Seq[Long] = d.keys.take(d.distinct()).toSeq

  private val filter = FileFilter("s3a://b/t/part-0.parquet", 1, 500L, 3L, 480L, Array[Byte](1, 2, 3, -1), fromFooter = true)

  /** One value of each registered class, and what must survive the round trip (arrays compared by content). */
  private val samples: Seq[(AnyRef, AnyRef => Any)] = Seq(
    (new ConfWritable({ val c = new Configuration(false); c.set("fs.s3a.endpoint", "http://127.0.0.1:9"); c }),
      (x: AnyRef) => x.asInstanceOf[ConfWritable].conf.get("fs.s3a.endpoint")),
    (SourceFile("file:/t/a=1/part-0.parquet", 1234L, 1700000000000L), identity[AnyRef] _),
    (filter, (x: AnyRef) => x.asInstanceOf[FileFilter] match { case f => (f.copy(filter = null), f.filter.toSeq) }),
    (DistinctPass.Done(filter), (x: AnyRef) => x.asInstanceOf[DistinctPass.Done].f.filter.toSeq),
    (DistinctPass.Partial("p", 0, 10L, 1L, Array(5L, 6L), null), (x: AnyRef) => x.asInstanceOf[DistinctPass.Partial] match {
      case p => (p.path, p.column, p.rows, p.nulls, p.hashes.toSeq, p.sketch)
    }),
    (DistinctPass.TaskGlobal(2, Array[Byte](9), Array[Byte](8, 7)), (x: AnyRef) => x.asInstanceOf[DistinctPass.TaskGlobal] match {
      case g => (g.column, g.bitset.toSeq, g.sketch.toSeq)
    }),
    (DistinctPass.NeedsInsert("p", 1, 10L, 0L, 9L), identity[AnyRef] _),
    (new DistinctPass.Merge(4L, 1L, hashes(3L, 1L, 3L), null), (x: AnyRef) => x.asInstanceOf[DistinctPass.Merge] match {
      case m => (m.rows, m.nulls, keys(m.set), m.sketch)
    }),
    (hashes(9L, 2L, 9L, 2L, 5L), (x: AnyRef) => keys(x.asInstanceOf[DistinctHashes])),
    (FooterFilters.Outcome("p", 0, Some(filter), "ok"), (x: AnyRef) => x.asInstanceOf[FooterFilters.Outcome] match {
      case o => (o.path, o.column, o.filter.map(_.filter.toSeq), o.reason)
    }),
    (IndexRow("p", 10L, 11L, "c", 12L, 13L, 14L, Array[Byte](1), "data"), (x: AnyRef) => x.asInstanceOf[IndexRow] match {
      case r => (r.copy(filter = null), r.filter.toSeq)
    }),
    (IndexFiles.Written(Seq("column=c/part-00000-x.parquet"), Seq(IndexFiles.RowWritten("p", 10L, "c", 32, fromFooter = false))),
      identity[AnyRef] _),
    (IndexFiles.RowWritten("p", 10L, "c", 32, fromFooter = true), identity[AnyRef] _),
    (IcebergParquetFormat.FileColumns(hasIds = true, Seq("a", "b"), rebased = true), identity[AnyRef] _))

  test("with the registrator: every class bloomindex sends through Kryo, and its array, arrives whole") {
    assert(samples.map(_._1.getClass).toSet == BloomIndexKryoRegistrator.Classes.toSet,
      "a registered class without a sample here, or a sample of a class not registered")
    val s = kryo(BloomIndexKryoRegistrator.Name).newInstance()
    samples.foreach { case (value, seen) =>
      assert(seen(s.deserialize[AnyRef](s.serialize(value))) == seen(value), value.getClass)
    }
    val array = Array(SourceFile("a", 1L, 2L), SourceFile("b", 3L, 4L))
    assert(s.deserialize[Array[SourceFile]](s.serialize(array)).toSeq == array.toSeq)
  }

  test("a FileSurvey job's result (an Object[] of each file's answer, as each survey gives it) arrives whole") {
    // Over DriverFiles files a survey is a Spark job whose tasks return their answers as an
    // Object[] through spark.serializer: the encryption survey's List of (column, key id) pairs,
    // the calendar survey's Boolean, Iceberg's FileColumns.
    val s = kryo(BloomIndexKryoRegistrator.Name).newInstance()
    val answers: Array[Any] = Array(
      List(("c", Some("key1")), ("d", None)), Nil, Seq("c" -> Option.empty[String]),
      java.lang.Boolean.TRUE, false,
      IcebergParquetFormat.FileColumns(hasIds = false, Seq("x"), rebased = false))
    assert(s.deserialize[Array[Any]](s.serialize(answers)).toSeq == answers.toSeq)
  }

  test("a global filter of every design is broadcast as types Spark registers: no registrator needed at query time") {
    val s = kryo().newInstance()
    FilterAlgorithm.all.foreach { alg =>
      val f = alg.empty(1024, 0.01)
      f.insert(0x1234567890abcdefL)
      val back = alg.wrapShared(s.deserialize[AnyRef](s.serialize(alg.shared(f))))
      assert(back.toBytes.toSeq == f.toBytes.toSeq, alg)
    }
  }

  test("a registrator of the user's that does this one's work is as good as this one") {
    assert(KryoSetup.problem(new SparkConf(false).setAll(Seq("spark.serializer" -> classOf[KryoSerializer].getName,
      "spark.kryo.registrationRequired" -> " true ", "spark.kryo.registrator" -> classOf[UsersRegistrator].getName))).isEmpty)
  }

  test("without it Kryo refuses them: the failure the registrator prevents") {
    val s = kryo().newInstance()
    val e = intercept[Exception](s.serialize(SourceFile("a", 1L, 2L)))
    assert(Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).exists(
      _.getMessage.contains("Class is not registered: bloomindex.source.SourceFile")), e)
  }

  test("KryoSetup: a problem only where Kryo requires registration and the registrator is missing") {
    def conf(kv: (String, String)*): SparkConf = new SparkConf(false).setAll(kv)
    val kryoSer = "spark.serializer" -> classOf[KryoSerializer].getName
    val required = "spark.kryo.registrationRequired" -> "true"
    assert(KryoSetup.problem(conf()).isEmpty)
    assert(KryoSetup.problem(conf(required)).isEmpty) // Java serialization: no registration
    assert(KryoSetup.problem(conf(kryoSer)).isEmpty)  // Kryo writes unregistered classes by name
    assert(KryoSetup.problem(conf(kryoSer, required, "spark.kryo.registrator" -> s"com.acme.R, ${BloomIndexKryoRegistrator.Name}")).isEmpty)
    val p = KryoSetup.problem(conf(kryoSer, required, "spark.kryo.registrator" -> "com.acme.R"))
    assert(p.exists(m => m.contains("com.acme.R") && m.contains(BloomIndexKryoRegistrator.Name)), p)
    val e = intercept[org.apache.spark.sql.AnalysisException](KryoSetup.check(conf(kryoSer, required)))
    assert(e.getCondition == "BLOOM_INDEX_INVALID_CONF")
    assert(e.getMessage.contains("spark.kryo.registrator") && e.getMessage.contains("no registrator"), e.getMessage)
    assert(KryoSetup.Registrator == BloomIndexKryoRegistrator.Name)
  }
}

/** A user's registrator that registers bloomindex's classes itself (a subclass of ours). */
class UsersRegistrator extends BloomIndexKryoRegistrator
