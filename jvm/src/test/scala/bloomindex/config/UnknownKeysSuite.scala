package bloomindex.config

import scala.collection.mutable.ArrayBuffer

import bloomindex.testing.TestSpark

import org.apache.logging.log4j.{Level, LogManager}
import org.apache.logging.log4j.core.{LogEvent, Logger}
import org.apache.logging.log4j.core.appender.AbstractAppender
import org.apache.logging.log4j.core.config.Property
import org.scalatest.funsuite.AnyFunSuite

class UnknownKeysSuite extends AnyFunSuite {

  test("known keys pass, the per-scheme log store key by its pattern; others outside spark.bloomindex. are not ours") {
    assert(UnknownKeys.unknown(Seq("spark.bloomindex.fpp.default", "spark.bloomindex.root",
      "spark.bloomindex.logStore.s3a.impl", "spark.bloomindex.logStore.gs.impl", "spark.sql.shuffle.partitions",
      "spark.bloomindexing", "spark.internal.bloomindex.test.blocksLayout")).isEmpty)
  }

  test("an unknown key is named with the closest known key: a prefix of one first, else the fewest edits") {
    assert(UnknownKeys.unknown(Seq("spark.bloomindex.fpp", "spark.bloomindex.pruning.enabeld",
      "spark.bloomindex.logStore.s3a.implementation", "spark.bloomindex.fpp")) == Seq(
      "spark.bloomindex.fpp" -> "spark.bloomindex.fpp.default",
      "spark.bloomindex.logStore.s3a.implementation" -> "spark.bloomindex.logStore.<scheme>.impl",
      "spark.bloomindex.pruning.enabeld" -> "spark.bloomindex.pruning.enabled"))
    assert(UnknownKeys.closest("spark.bloomindex.cache.maxbytes") == "spark.bloomindex.cache.maxBytes")
    assert(UnknownKeys.closest("spark.bloomindex.dropwithtable") == "spark.bloomindex.dropWithTable")
  }

  test("a session that starts with an unknown key logs one warning naming it and the closest key") {
    val messages = ArrayBuffer.empty[String]
    val appender = new AbstractAppender("unknown-keys", null, null, true, Property.EMPTY_ARRAY) {
      override def append(event: LogEvent): Unit = messages.synchronized(messages += event.getMessage.getFormattedMessage)
    }
    appender.start()
    val logger = LogManager.getLogger("bloomindex.config.UnknownKeys").asInstanceOf[Logger]
    val level = logger.getLevel
    logger.addAppender(appender)
    logger.setLevel(Level.WARN)
    try {
      val session = TestSpark.session.newSession()
      session.conf.set("spark.bloomindex.fpp", "2")
      session.conf.set("spark.bloomindex.pruning.enabled", "true")
      session.sql("SELECT 1").collect()
      session.sql("SELECT 2").collect()
      assert(messages.toSeq == Seq("bloomindex: unknown configuration key 'spark.bloomindex.fpp' is ignored; " +
        "did you mean 'spark.bloomindex.fpp.default'?"))
    } finally {
      logger.removeAppender(appender)
      logger.setLevel(level)
    }
  }
}
