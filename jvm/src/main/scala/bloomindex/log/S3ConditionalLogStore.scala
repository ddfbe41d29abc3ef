package bloomindex.log

import bloomindex.errors.{BloomIndexErrors, Causes}

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileAlreadyExistsException => HadoopFileAlreadyExists, CreateFlag, FileContext, Options, Path}
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf

/**
 * S3 through Hadoop's S3A (`s3a://`, and `s3://` mapped to S3A): `PutObject` with
 * `If-None-Match: *`, which S3 has honoured since August 2024 (412 Precondition Failed when the
 * key exists; 409 ConditionalRequestConflict while another conditional write of the key is in
 * flight, retried here). Asked through the file system API of Hadoop 3.4.2 and later:
 * `createFile(path).must("fs.option.create.conditional.overwrite", true)` (HADOOP-19256; S3A
 * sends the header unless `fs.s3a.create.conditional.enabled=false`). S3A translates the 412
 * to `RemoteFileChangedException`. Relies on S3's strong read-after-write and list-after-write
 * consistency (since December 2020) for readers and for the listing of versions. An
 * S3-compatible store that ignores `If-None-Match` would not be safe (moto, which the tests
 * use, honours it).
 */
class S3ConditionalLogStore(conf: Configuration) extends ConditionalCreateLogStore(conf) {

  override protected def conditionalCreate(path: Path, bytes: Array[Byte]): Unit = {
    val fs = path.getFileSystem(hadoopConf)
    if (!fs.hasPathCapability(path, LogStore.ConditionalOverwrite)) {
      throw BloomIndexErrors.invalidConf(BloomIndexSQLConf.logStoreImplKey(path.toUri.getScheme),
        s"(store ${getClass.getName}) cannot commit safely under ${path.getParent}: ${fs.getClass.getName} offers " +
          s"no conditional create (${LogStore.ConditionalOverwrite}); it needs S3A of Hadoop 3.4.2 or later " +
          "(hadoop-aws of Spark's Hadoop version) with fs.s3a.create.conditional.enabled=true (the default), " +
          "or another store named by this key")
    }
    val out = fs.createFile(path).overwrite(false).must(LogStore.ConditionalOverwrite, true).build()
    // The PUT, with its precondition, happens in close().
    try out.write(bytes) finally out.close()
  }

  override protected def preconditionFailed(e: Throwable): Boolean =
    Causes.of(e).exists { c =>
      c.getClass.getSimpleName == "RemoteFileChangedException" || LogStore.says(c, "Status Code: 412", "PreconditionFailed", "Precondition Failed")
    }

  override protected def conflictInFlight(e: Throwable): Boolean =
    Causes.of(e).exists(c => LogStore.says(c, "ConditionalRequestConflict", "Status Code: 409"))
}
