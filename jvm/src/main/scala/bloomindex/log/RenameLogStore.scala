package bloomindex.log

import java.nio.file.{FileAlreadyExistsException, Files, Paths}

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileAlreadyExistsException => HadoopFileAlreadyExists, CreateFlag, FileContext, Options, Path}

/**
 * HDFS, ABFS (hierarchical namespace) and other file systems with an atomic rename: the entry
 * is written to a hidden temporary file, then renamed without overwrite
 * (`FileContext.rename(..., Options.Rename.NONE)`). Relies on the name node (HDFS) or the
 * service (ABFS) checking the target and renaming in one step. NOT safe on S3 or GCS, where a
 * rename is a check, a copy and a delete: two writers can both pass the check.
 */
class RenameLogStore(conf: Configuration) extends LogStore(conf) {
  override def createIfAbsent(path: Path, content: String): Unit = {
    val fc = FileContext.getFileContext(path.toUri, hadoopConf)
    val tmp = writeAside(fc, path, content)
    try {
      try fc.rename(tmp, path, Options.Rename.NONE)
      catch { case e: HadoopFileAlreadyExists => throw new FileAlreadyExistsException(path.toString, null, e.getMessage) }
    } finally deleteQuietly(fc, tmp)
  }
}
