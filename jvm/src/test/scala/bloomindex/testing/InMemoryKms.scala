package bloomindex.testing

import java.nio.charset.StandardCharsets
import java.util.Base64

import org.apache.parquet.crypto.KeyAccessDeniedException
import org.apache.parquet.crypto.keytools.LocalWrapKmsClient

/**
 * A KMS client holding its master keys in memory, for tests and demos only: the counterpart
 * of parquet-hadoop's test-only `InMemoryKMS`, which the PySpark wheel does not ship. Keys come
 * from `parquet.encryption.key.list` as `id: base64, id2: base64` (16, 24 or 32 bytes each);
 * data keys are wrapped locally (AES-GCM) by Parquet's `LocalWrapKmsClient`.
 *
 * {{{
 *   spark.conf.set("parquet.crypto.factory.class",
 *     "org.apache.parquet.crypto.keytools.PropertiesDrivenCryptoFactory")
 *   spark.conf.set("parquet.encryption.kms.client.class", "bloomindex.testing.InMemoryKms")
 *   spark.conf.set("parquet.encryption.key.list", "k1: AAECAwQFBgcICQoLDA0ODw==")
 * }}}
 */
class InMemoryKms extends LocalWrapKmsClient {

  private var keys: Map[String, Array[Byte]] = Map.empty

  override protected def initializeInternal(): Unit = {
    val list = Option(hadoopConfiguration.getTrimmedStrings(InMemoryKms.KeyList)).getOrElse(Array.empty[String])
    keys = list.filter(_.nonEmpty).map { entry =>
      val colon = entry.indexOf(':')
      if (colon <= 0) throw new IllegalArgumentException(s"${InMemoryKms.KeyList}: '$entry' is not 'id: base64'")
      entry.substring(0, colon).trim -> Base64.getDecoder.decode(entry.substring(colon + 1).trim.getBytes(StandardCharsets.US_ASCII))
    }.toMap
  }

  override protected def getMasterKeyFromServer(keyId: String): Array[Byte] =
    keys.getOrElse(keyId, throw new KeyAccessDeniedException(s"master key '$keyId' is not in ${InMemoryKms.KeyList}"))
}

object InMemoryKms {
  val KeyList = "parquet.encryption.key.list"
}
