package bloomindex.indexing

import java.util.concurrent.ConcurrentHashMap

import org.apache.spark.SparkContext
import org.apache.spark.util.LongAccumulator

/**
 * Source files a build has read, per Spark job group (an index's builds run in group
 * `bloomindex-<name>`): what a progress display shows beside Spark's task counts. A task adds
 * its files when it has consumed them; a file Spark splits over several tasks counts once, in
 * the last of them. Only the data pass counts (a second read of split files does not).
 */
object BuildProgress {

  private val byGroup = new ConcurrentHashMap[String, (Long, LongAccumulator)]()

  /** Starts counting for the job group of the calling thread (none: not counted); the accumulator tasks add to. */
  private[indexing] def start(sc: SparkContext, totalFiles: Long): Option[LongAccumulator] =
    Option(sc.getLocalProperty("spark.jobGroup.id")).map { group =>
      val done = sc.longAccumulator(s"bloomindex files read ($group)")
      byGroup.put(group, (totalFiles, done))
      done
    }

  /** Forgets `group`'s last build (a new one starts). */
  def clear(group: String): Unit = byGroup.remove(group)

  /** (files read, files) of the last build of `group` in this JVM, if one counted. */
  def of(group: String): Option[(Long, Long)] = Option(byGroup.get(group)).map { case (total, done) => (done.value.longValue, total) }

  /** How many files each task adds: the files whose last task (by index) it is. */
  private[indexing] def filesCountedBy(filesByTask: Array[Array[String]]): Array[Int] = {
    val last = scala.collection.mutable.HashMap.empty[String, Int]
    filesByTask.indices.foreach(i => filesByTask(i).foreach(f => last(f) = i))
    val counts = new Array[Int](filesByTask.length)
    last.values.foreach(i => counts(i) += 1)
    counts
  }
}
