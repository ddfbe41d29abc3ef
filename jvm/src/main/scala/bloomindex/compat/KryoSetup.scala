package bloomindex.compat

import bloomindex.errors.BloomIndexErrors

import org.apache.spark.SparkConf
import org.apache.spark.serializer.KryoSerializer

/**
 * Where `spark.kryo.registrationRequired` is true, Kryo refuses every class not registered, and
 * bloomindex's tasks would fail with "Class is not registered: bloomindex...". [[check]] says
 * what to set instead, before any job of bloomindex's runs.
 */
private[bloomindex] object KryoSetup {

  /** `bloomindex.BloomIndexKryoRegistrator`, by name: this object is loaded without Kryo's classes. */
  val Registrator = "bloomindex.BloomIndexKryoRegistrator"

  /** The reason `conf` cannot run bloomindex's jobs, if it cannot. */
  def problem(conf: SparkConf): Option[String] = {
    val required = conf.getBoolean("spark.kryo.registrationRequired", defaultValue = false)
    val registrators = conf.get("spark.kryo.registrator", "").split(',').map(_.trim).filter(_.nonEmpty)
    if (!required || !kryo(conf) || registrators.contains(Registrator)) None
    else Some(s"lists ${if (registrators.isEmpty) "no registrator" else registrators.mkString(", ")}, and " +
      s"spark.kryo.registrationRequired is true: add $Registrator to it (after your own, separated by a comma) " +
      "when the session starts; bloomindex's jobs send its own classes through Kryo")
  }

  /** Whether `spark.serializer` is Kryo's (or a subclass; by name where the class cannot be loaded). */
  private def kryo(conf: SparkConf): Boolean = conf.getOption("spark.serializer").map(_.trim).exists { name =>
    try classOf[KryoSerializer].isAssignableFrom(Class.forName(name, false, Option(Thread.currentThread.getContextClassLoader).getOrElse(getClass.getClassLoader)))
    catch { case _: ClassNotFoundException | _: LinkageError => name.contains("Kryo") }
  }

  /** Throws BLOOM_INDEX_INVALID_CONF where [[problem]] finds one. */
  def check(conf: SparkConf): Unit =
    problem(conf).foreach(p => throw BloomIndexErrors.invalidConf("spark.kryo.registrator", p))
}
