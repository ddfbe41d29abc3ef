package bloomindex.log

import bloomindex.errors.Causes

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileAlreadyExistsException => HadoopFileAlreadyExists, CreateFlag, FileContext, Options, Path}

/**
 * Google Cloud Storage through the GCS connector (`gs://`): the connector writes an object
 * created without overwrite under the precondition `ifGenerationMatch=0` ("no live
 * generation"), checked by GCS when the upload is finalized; a refusal is HTTP 412. Relies on
 * GCS's strong consistency for reads and listings. Tested against fake-gcs-server with the
 * connector's multipart uploads (`make test-gcs`; docs/decisions.md says what it models).
 */
class GcsLogStore(conf: Configuration) extends ConditionalCreateLogStore(conf) {

  override protected def conditionalCreate(path: Path, bytes: Array[Byte]): Unit = {
    val fs = path.getFileSystem(hadoopConf)
    val out = fs.create(path, false)
    try out.write(bytes) finally out.close()
  }

  override protected def preconditionFailed(e: Throwable): Boolean =
    e.isInstanceOf[HadoopFileAlreadyExists] ||
      Causes.of(e).exists(c => LogStore.says(c, "412 Precondition Failed", "conditionNotMet"))
}
