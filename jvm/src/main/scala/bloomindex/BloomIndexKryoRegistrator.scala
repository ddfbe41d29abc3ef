package bloomindex

import bloomindex.compat.ConfWritable
import bloomindex.indexing.{DistinctHashes, DistinctPass, FileFilter, FooterFilters}
import bloomindex.layout.{IndexFiles, IndexRow}
import bloomindex.source.{SourceFile, SourceProviders}

import com.esotericsoftware.kryo.Kryo
import org.apache.spark.serializer.KryoRegistrator

/**
 * Registers with Kryo every bloomindex class that goes through `spark.serializer`: the values
 * of bloomindex's broadcasts, the results of its tasks, the records its build shuffles or
 * caches, and the file lists it hands to `parallelize`. Needed where
 * `spark.kryo.registrationRequired=true` (Kryo then refuses any class not registered); elsewhere
 * it only makes those records smaller (a number instead of the class's name).
 * `bloomindex.configure()` (Python) adds it to `spark.kryo.registrator`; with spark-submit:
 * {{{
 *   --conf spark.kryo.registrator=bloomindex.BloomIndexKryoRegistrator
 * }}}
 * (a list: after your own registrators, separated by commas). Closures, and the accumulators'
 * updates, go through Java serialization whatever `spark.serializer` is, and need nothing here.
 */
class BloomIndexKryoRegistrator extends KryoRegistrator {
  override def registerClasses(kryo: Kryo): Unit =
    BloomIndexKryoRegistrator.Classes.foreach { c =>
      kryo.register(c)
      kryo.register(java.lang.reflect.Array.newInstance(c, 0).getClass)
    }
}

object BloomIndexKryoRegistrator {

  /** The class's name, as `spark.kryo.registrator` lists it. */
  val Name: String = classOf[BloomIndexKryoRegistrator].getName

  /**
   * The classes registered, each with its array class. Kryo numbers registrations in the order
   * made, the same in the driver and every executor (the same jar); what these classes hold
   * (Scala's collections, options and tuples, arrays of primitives, strings) Spark registers.
   * Queries send none of bloomindex's classes but the Hadoop configuration of a column loaded by
   * Spark jobs (a global filter is broadcast as arrays).
   */
  private[bloomindex] val Classes: Seq[Class[_]] = Seq(
    // The Hadoop configuration broadcast to the build's and the load's tasks.
    classOf[ConfWritable],
    // Build: the files handed to tasks, and what the tasks return, shuffle and cache.
    classOf[SourceFile],
    classOf[FileFilter],
    classOf[DistinctPass.Done],
    classOf[DistinctPass.Partial],
    classOf[DistinctPass.TaskGlobal],
    classOf[DistinctPass.NeedsInsert],
    classOf[DistinctPass.Merge],
    classOf[DistinctHashes],
    classOf[FooterFilters.Outcome],
    classOf[IndexRow],
    classOf[IndexFiles.Written],
    classOf[IndexFiles.RowWritten]) ++
    // Each table format's own (in the registry's order, the same in every JVM of the application).
    SourceProviders.all.flatMap(_.kryoClasses)
}
