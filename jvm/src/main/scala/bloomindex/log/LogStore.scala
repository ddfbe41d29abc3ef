package bloomindex.log

import java.io.IOException
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{FileAlreadyExistsException, Files, Paths}
import java.util.UUID

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileAlreadyExistsException => HadoopFileAlreadyExists, FileContext, Options, Path}

/**
 * Writes and reads the index log's files. Its guarantees, which the log relies on:
 *
 *  - Atomic visibility: a file is seen whole or not at all (written aside, then moved in).
 *  - One creator per file: [[createIfAbsent]] fails with `FileAlreadyExistsException` when the
 *    file exists, and of two concurrent writers of the same path exactly one succeeds.
 *    Local files: a hard link to the finished temporary file (`link(2)` fails if the target
 *    exists). Other file systems: `FileContext.rename` without overwrite, which is atomic on
 *    HDFS. Object stores without an atomic put-if-absent are not safe for concurrent writers.
 *  - Listing is consistent with creates (true of local files and HDFS).
 */
class LogStore(hadoopConf: Configuration) {

  def createIfAbsent(path: Path, content: String): Unit = {
    val fc = FileContext.getFileContext(path.toUri, hadoopConf)
    val tmp = new Path(path.getParent, s".${path.getName}.${UUID.randomUUID()}.tmp")
    val out = fc.create(tmp, java.util.EnumSet.of(org.apache.hadoop.fs.CreateFlag.CREATE),
      Options.CreateOpts.createParent())
    try out.write(content.getBytes(UTF_8)) finally out.close()
    try {
      if (path.toUri.getScheme == null || path.toUri.getScheme == "file") {
        val target = Paths.get(path.toUri.getPath)
        try Files.createLink(target, Paths.get(tmp.toUri.getPath))
        catch { case e: FileAlreadyExistsException => throw new java.nio.file.FileAlreadyExistsException(e.getFile) }
      } else {
        try fc.rename(tmp, path, Options.Rename.NONE)
        catch { case e: HadoopFileAlreadyExists => throw new FileAlreadyExistsException(path.toString, null, e.getMessage) }
      }
    } finally {
      try fc.delete(tmp, false) catch { case _: IOException => () }
    }
  }

  /** Reads a whole file, refusing one larger than `maxBytes` (log entries are small). */
  def read(path: Path, maxBytes: Int): String = {
    val fs = path.getFileSystem(hadoopConf)
    val len = fs.getFileStatus(path).getLen
    if (len > maxBytes) throw new IOException(s"$path: $len bytes, more than a log entry may hold ($maxBytes)")
    val in = fs.open(path)
    try new String(in.readNBytes(len.toInt), UTF_8) finally in.close()
  }
}
