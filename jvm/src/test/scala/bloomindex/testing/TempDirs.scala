package bloomindex.testing

import java.io.IOException
import java.nio.file.{FileVisitResult, Files, Path, SimpleFileVisitor}
import java.nio.file.attribute.BasicFileAttributes

/**
 * Temporary folders of the Scala suites: each under one folder of this test run, which is deleted
 * with everything in it when the JVM exits (sbt forks one for the suites), so a run leaves nothing
 * in the system's temporary folder however many tables and indexes its tests wrote.
 *
 * The deletion is a hook of Hadoop's `ShutdownHookManager`, which runs its hooks one after the
 * other by priority: at [[DeletePriority]], after Spark's (all of Spark's hooks, the
 * SparkContext's stop among them, run within one hook at priority 40; stopping writes the
 * workload history under the indexes' roots, which are in this folder) and before Hadoop closes
 * its file systems (10).
 */
object TempDirs {
  private val DeletePriority = 20

  private lazy val runRoot: Path = {
    val root = Files.createTempDirectory("bloomindex-scala-tests")
    org.apache.hadoop.util.ShutdownHookManager.get().addShutdownHook(() => deleteRecursively(root), DeletePriority)
    root
  }

  /** A new empty folder whose name starts with `prefix`, deleted at the JVM's exit. */
  def create(prefix: String): Path = Files.createTempDirectory(runRoot, prefix)

  private def deleteRecursively(root: Path): Unit =
    try {
      Files.walkFileTree(root, new SimpleFileVisitor[Path] {
        override def visitFile(file: Path, attrs: BasicFileAttributes): FileVisitResult = {
          Files.deleteIfExists(file)
          FileVisitResult.CONTINUE
        }
        override def visitFileFailed(file: Path, e: IOException): FileVisitResult = FileVisitResult.CONTINUE
        override def postVisitDirectory(dir: Path, e: IOException): FileVisitResult = {
          try Files.deleteIfExists(dir) catch { case _: IOException => }
          FileVisitResult.CONTINUE
        }
      })
    } catch {
      case _: IOException => // what is left stays: a cleanup at exit never fails the run
    }
}
