package bloomindex.log

import java.nio.file.{FileAlreadyExistsException, Files, Paths}

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileAlreadyExistsException => HadoopFileAlreadyExists, CreateFlag, FileContext, Options, Path}

/**
 * Local files: the entry is written to a hidden temporary file, then hard-linked to its name.
 * Relies on `link(2)`, which fails with EEXIST when the target exists, atomically, for every
 * process of the machine (and on NFS v3+ servers).
 */
class LocalLogStore(conf: Configuration) extends LogStore(conf) {
  override def createIfAbsent(path: Path, content: String): Unit = {
    val fc = FileContext.getFileContext(path.toUri, hadoopConf)
    val tmp = writeAside(fc, path, content)
    try {
      try Files.createLink(Paths.get(path.toUri.getPath), Paths.get(tmp.toUri.getPath))
      catch { case e: FileAlreadyExistsException => throw new FileAlreadyExistsException(e.getFile) }
    } finally deleteQuietly(fc, tmp)
  }
}
