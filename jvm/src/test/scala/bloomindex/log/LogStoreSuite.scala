package bloomindex.log

import java.io.IOException
import java.nio.file.{FileAlreadyExistsException, Files}

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.AnalysisException
import org.scalatest.funsuite.AnyFunSuite
import bloomindex.testing.TempDirs

/** Choosing a log store per scheme, and the conditional-create protocol (without a server). */
class LogStoreSuite extends AnyFunSuite {

  private def storeOf(uri: String, conf: Configuration = new Configuration()) =
    LogStore.forPath(new Path(uri), conf).getClass

  test("each scheme gets its default store") {
    assert(storeOf("/tmp/x") == classOf[LocalLogStore])
    assert(storeOf("file:/tmp/x") == classOf[LocalLogStore])
    Seq("hdfs://nn/x", "viewfs://c/x", "abfs://c@a.dfs.core.windows.net/x", "abfss://c@a.dfs.core.windows.net/x")
      .foreach(u => assert(storeOf(u) == classOf[RenameLogStore], u))
    assert(storeOf("s3a://b/x") == classOf[S3ConditionalLogStore])
    assert(storeOf("s3://b/x") == classOf[S3ConditionalLogStore])
    assert(storeOf("gs://b/x") == classOf[GcsLogStore])
  }

  test("spark.bloomindex.logStore.<scheme>.impl chooses the store of its scheme only") {
    val conf = new Configuration()
    conf.set("spark.bloomindex.logStore.s3a.impl", classOf[RenameLogStore].getName)
    assert(storeOf("s3a://b/x", conf) == classOf[RenameLogStore])
    assert(storeOf("s3://b/x", conf) == classOf[S3ConditionalLogStore])
    conf.set("spark.bloomindex.logStore.oss.impl", classOf[S3ConditionalLogStore].getName)
    assert(storeOf("oss://b/x", conf) == classOf[S3ConditionalLogStore])
  }

  test("a scheme with no known safe store commits by rename and warns once, naming the setting") {
    val before = IndexLog.warnings().size()
    assert(storeOf("wasb://c@a.blob.core.windows.net/x") == classOf[RenameLogStore])
    assert(storeOf("wasb://c@a.blob.core.windows.net/y") == classOf[RenameLogStore])
    val added = IndexLog.warnings().size() - before
    assert(added == 1)
    val w = IndexLog.warnings().toArray.map(_.toString).filter(_.contains("wasb://"))
    assert(w.length == 1 && w.head.contains("spark.bloomindex.logStore.wasb.impl"), w.toSeq)
  }

  test("a setting naming a missing class or no store is refused, naming the setting") {
    val conf = new Configuration()
    conf.set("spark.bloomindex.logStore.s3a.impl", "no.such.Store")
    val e1 = intercept[AnalysisException](storeOf("s3a://b/x", conf))
    assert(e1.getCondition == "BLOOM_INDEX_INVALID_CONF")
    assert(e1.getMessage.contains("spark.bloomindex.logStore.s3a.impl") && e1.getMessage.contains("no.such.Store"))
    conf.set("spark.bloomindex.logStore.s3a.impl", "java.lang.String")
    val e2 = intercept[AnalysisException](storeOf("s3a://b/x", conf))
    assert(e2.getCondition == "BLOOM_INDEX_INVALID_CONF" && e2.getMessage.contains("is not a bloomindex.log.LogStore"))
  }

  /**
   * A conditional store over local files whose "service" can be told to answer like S3: 412
   * after a write that did happen (a retried request), or 409 a number of times.
   */
  private class FakeConditionalStore(conf: Configuration) extends ConditionalCreateLogStore(conf) {
    var conflicts = 0
    var writeThen412 = false
    var calls = 0
    override protected def conditionalCreate(path: Path, bytes: Array[Byte]): Unit = {
      calls += 1
      val p = java.nio.file.Paths.get(path.toUri.getPath)
      if (conflicts > 0) { conflicts -= 1; throw new IOException("ConditionalRequestConflict (Status Code: 409)") }
      if (writeThen412) { Files.write(p, bytes); writeThen412 = false }
      if (Files.exists(p)) throw new IOException("PreconditionFailed (Status Code: 412)")
      Files.write(p, bytes)
    }
    override protected def preconditionFailed(e: Throwable): Boolean = e.getMessage.contains("412")
    override protected def conflictInFlight(e: Throwable): Boolean = e.getMessage.contains("409")
  }

  test("conditional create: a refusal is a lost race, unless the object holds our own bytes; 409 is retried") {
    val dir = TempDirs.create("logstore")
    val path = new Path(dir.resolve("00000000000000000000.json").toUri)
    val store = new FakeConditionalStore(new Configuration())
    store.createIfAbsent(path, "first")
    assert(intercept[FileAlreadyExistsException](store.createIfAbsent(path, "second")).getFile == path.toString)
    assert(store.read(path, 100) == "first")

    val p2 = new Path(dir.resolve("00000000000000000001.json").toUri)
    store.writeThen412 = true
    store.createIfAbsent(p2, "mine")
    assert(store.read(p2, 100) == "mine")

    val p3 = new Path(dir.resolve("00000000000000000002.json").toUri)
    store.conflicts = 2
    store.calls = 0
    store.createIfAbsent(p3, "after conflicts")
    assert(store.calls == 3 && store.read(p3, 100) == "after conflicts")

    val p4 = new Path(dir.resolve("00000000000000000003.json").toUri)
    store.conflicts = 100
    assert(intercept[IOException](store.createIfAbsent(p4, "x")).getMessage.contains("409"))
    assert(!Files.exists(java.nio.file.Paths.get(p4.toUri.getPath)))
  }
}
