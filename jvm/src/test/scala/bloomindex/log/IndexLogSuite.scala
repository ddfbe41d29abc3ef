package bloomindex.log

import java.nio.file.Files

import bloomindex.errors.ConcurrentBloomIndexUpdateException
import bloomindex.sbbf.SbbfSizing.Sizing

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite
import bloomindex.testing.TempDirs

/** The log on local files, without Spark: damaged and oversized entries, racing commits. */
class IndexLogSuite extends AnyFunSuite {

  private def entry(v: Long, state: String, op: String = "op") = LogEntry(v, state, "CREATE", op, 1L, 1L,
    IndexSpec("i", SourceSpec(None, "parquet", Seq("file:/x"), Map.empty, Nil),
      Seq(ColumnSpec("a", "BIGINT", 0.01, None, Sizing.Exact)), global = false),
    if (state == IndexState.Active) Some(IndexData(s"data/$op", 1, 1, 1, 0, Map.empty)) else None)

  private def newLog(): IndexLog = new IndexLog(new Path(TempDirs.create("indexlog").toUri), new Configuration())

  private def write(log: IndexLog, v: Long, text: String): Unit =
    Files.writeString(java.nio.file.Paths.get(log.entryPath(v).toUri), text)

  test("readers skip damaged entries; commands see the newest version and what is damaged after the readable one") {
    val log = newLog()
    log.commit(entry(0, IndexState.Creating))
    log.commit(entry(1, IndexState.Active))
    write(log, 2, "{\"formatVersion\": 1, \"vers")
    assert(log.lastActive().map(_.version).contains(1L))
    val head = log.head().get
    assert(head.version == 2 && head.entry.map(_.version).contains(1L))
    assert(head.damaged.map(_._1) == Seq(2L) && head.damaged.head._2.contains("not valid JSON"))
    assert(intercept[ConcurrentBloomIndexUpdateException](log.commit(entry(2, IndexState.Refreshing)))
      .getMessage.contains("another command committed log version 2"))
    log.commit(entry(3, IndexState.Deleted))
    assert(log.lastActive().isEmpty && log.head().get.damaged.isEmpty)
  }

  test("a commit whose predecessor VACUUM removed (newer versions exist) is a conflict, not a version below the newest") {
    val log = newLog()
    (0L to 5L).foreach(v => log.commit(entry(v, if (v % 2 == 0) IndexState.Refreshing else IndexState.Active, s"o$v")))
    // What VACUUM does to entries replaced longer ago than the retention: the oldest go.
    (0L to 3L).foreach(v => java.nio.file.Files.delete(java.nio.file.Paths.get(log.entryPath(v).toUri)))
    // A command that began at version 2 (its transient entry) commits its end as version 3.
    val e = intercept[ConcurrentBloomIndexUpdateException](log.commit(entry(3, IndexState.Active, "late")))
    assert(e.getMessage.contains("another command committed log version 3"), e.getMessage)
    assert(log.versions() == Seq(4L, 5L) && log.lastActive().map(_.operationId).contains("o5"))
    // The next version after the newest commits as before.
    log.commit(entry(6, IndexState.Refreshing, "next"))
    assert(log.versions() == Seq(4L, 5L, 6L))
  }

  test("a VACUUM that removes the predecessor and the version between the look and the creation: a conflict, nothing created") {
    val log = newLog()
    (0L to 5L).foreach(v => log.commit(entry(v, if (v % 2 == 0) IndexState.Refreshing else IndexState.Active, s"o$v")))
    // A command that began at version 2 commits its end as version 3 while a VACUUM removes the
    // entries up to 3 (oldest first). Before, only 2 was looked for: found there, then removed
    // with 3 by the VACUUM (the hook), 3 was created below the newest, never read, and the commit
    // succeeded. Now the listing shows 3 (and 4, 5) before the hook's moment: refused at once.
    def vacuum(): Unit = (0L to 3L).foreach(k => java.nio.file.Files.deleteIfExists(java.nio.file.Paths.get(log.entryPath(k).toUri)))
    log.afterPredecessorCheck = v => if (v == 3L) vacuum()
    try {
      val e = intercept[ConcurrentBloomIndexUpdateException](log.commit(entry(3, IndexState.Active, "late")))
      assert(e.getMessage.contains("another command committed log version 3"), e.getMessage)
    } finally log.afterPredecessorCheck = _ => ()
    vacuum() // the VACUUM ends (it had begun: 3 was listed)
    assert(log.versions() == Seq(4L, 5L) && log.lastActive().map(_.operationId).contains("o5"))
    log.commit(entry(6, IndexState.Refreshing, "next"))
    assert(log.versions() == Seq(4L, 5L, 6L))
  }

  test("an entry over the size limit is refused on its length, before it is read") {
    val log = newLog()
    log.commit(entry(0, IndexState.Creating))
    write(log, 1, LogJson.write(entry(1, IndexState.Active)).dropRight(1) + " " * (LogJson.MaxEntryBytes + 1) + "}")
    val head = log.head().get
    assert(head.entry.map(_.version).contains(0L))
    assert(head.damaged.head._2.contains("more than a log entry may hold"), head.damaged)
    assert(log.lastActive().isEmpty)
  }

  test("of many threads committing the same version, exactly one wins") {
    val log = newLog()
    val pool = java.util.concurrent.Executors.newFixedThreadPool(8)
    try {
      for (v <- 0L until 20L) {
        val results = (0 until 8).map { t =>
          pool.submit(() => try { log.commit(entry(v, IndexState.Creating, s"t$t")); true } catch {
            case _: ConcurrentBloomIndexUpdateException => false
          })
        }.map(_.get())
        assert(results.count(identity) == 1)
      }
    } finally pool.shutdown()
    assert(log.versions() == (0L until 20L))
    assert((0L until 20L).forall(v => log.read(v).version == v))
  }
}
