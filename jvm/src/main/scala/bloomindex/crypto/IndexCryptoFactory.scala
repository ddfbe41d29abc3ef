package bloomindex.crypto

import java.net.URLDecoder
import java.nio.charset.StandardCharsets

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.crypto.{EncryptionPropertiesFactory, FileEncryptionProperties}
import org.apache.parquet.crypto.keytools.PropertiesDrivenCryptoFactory
import org.apache.parquet.hadoop.api.WriteSupport.WriteContext
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf
import org.apache.spark.sql.catalyst.catalog.ExternalCatalogUtils

/**
 * The crypto factory of an encrypted index's writes (see [[IndexEncryption]]). Each index
 * Parquet file holds one indexed column's rows (the writes are partitioned by `column`), so
 * the factory reads the column from the file's `column=<name>` folder and has the session's
 * own factory encrypt that file's per-column fields (`filter`, `ndv`, `null_count`) with the
 * master key of the source column, and the footer with the session's footer key. Files of
 * columns that are not encrypted in the source are written in plaintext. What to do comes in
 * the write's Hadoop configuration, under the keys of `BloomIndexSQLConf.ENCRYPTION_*`
 * ([[IndexEncryption.writerOptions]]): source column -> master key id, footer key, the
 * session's factory.
 */
class IndexCryptoFactory extends EncryptionPropertiesFactory {

  override def getFileEncryptionProperties(conf: Configuration, path: Path, context: WriteContext): FileEncryptionProperties = {
    val keys = IndexCryptoFactory.decodeKeys(conf.get(BloomIndexSQLConf.ENCRYPTION_COLUMN_KEYS.key, ""))
    val column = Iterator.iterate(path)(_.getParent).takeWhile(_ != null).map(_.getName)
      .collectFirst { case n if n.startsWith("column=") => ExternalCatalogUtils.unescapePathName(n.stripPrefix("column=")) }
    column.flatMap(keys.get) match {
      case None => null
      case Some(key) =>
        val fields = context.getSchema.getFields.asScala.map(_.getName).toSet
        val sensitive = IndexCryptoFactory.SensitiveFields.filter(fields.contains)
        val c = new Configuration(conf)
        c.set(PropertiesDrivenCryptoFactory.COLUMN_KEYS_PROPERTY_NAME, s"$key:${sensitive.mkString(",")}")
        c.set(PropertiesDrivenCryptoFactory.FOOTER_KEY_PROPERTY_NAME, conf.get(BloomIndexSQLConf.ENCRYPTION_FOOTER_KEY.key, key))
        c.unset(PropertiesDrivenCryptoFactory.UNIFORM_KEY_PROPERTY_NAME)
        val delegate = conf.get(BloomIndexSQLConf.ENCRYPTION_FACTORY_CLASS.key, classOf[PropertiesDrivenCryptoFactory].getName)
        c.set(EncryptionPropertiesFactory.CRYPTO_FACTORY_CLASS_PROPERTY_NAME, delegate)
        EncryptionPropertiesFactory.loadFactory(c).getFileEncryptionProperties(c, path, context)
    }
  }
}

object IndexCryptoFactory {
  /**
   * The fields of index rows that tell something about a column's values: a checksum of a
   * filter too (a guessed set of values can be checked against it).
   */
  val SensitiveFields: Seq[String] = Seq("filter", "ndv", "null_count", "checksum")

  def encodeKeys(keys: Map[String, String]): String =
    keys.toSeq.sorted.map { case (c, k) => s"${enc(c)}=${enc(k)}" }.mkString("&")

  def decodeKeys(s: String): Map[String, String] =
    s.split("&").filter(_.nonEmpty).map { kv =>
      val Array(c, k) = kv.split("=", 2)
      dec(c) -> dec(k)
    }.toMap

  private def enc(s: String) = java.net.URLEncoder.encode(s, StandardCharsets.UTF_8)
  private def dec(s: String) = URLDecoder.decode(s, StandardCharsets.UTF_8)
}
