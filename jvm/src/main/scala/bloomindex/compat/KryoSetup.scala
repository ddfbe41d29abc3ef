package bloomindex.compat

import java.util.concurrent.ConcurrentHashMap

import scala.util.control.NonFatal

import bloomindex.errors.BloomIndexErrors

import org.apache.spark.SparkConf
import org.apache.spark.serializer.KryoSerializer

/**
 * Where `spark.kryo.registrationRequired` is true, Kryo refuses every class not registered, and
 * bloomindex's tasks would fail with "Class is not registered: bloomindex...". [[check]] says
 * what to set instead, before any job of bloomindex's runs.
 */
private[bloomindex] object KryoSetup {

  /** `bloomindex.BloomIndexKryoRegistrator`, by name (nothing depends on the root package). */
  val Registrator = "bloomindex.BloomIndexKryoRegistrator"

  private val Keys = Seq("spark.serializer", "spark.kryo.registrationRequired", "spark.kryo.registrator",
    "spark.kryo.classesToRegister")

  /** Whether a Kryo made from the settings (by their values) has bloomindex's classes registered. */
  private val registered = new ConcurrentHashMap[Seq[Option[String]], java.lang.Boolean]()

  /** The reason `conf` cannot run bloomindex's jobs, if it cannot. */
  def problem(conf: SparkConf): Option[String] = {
    val required = conf.get("spark.kryo.registrationRequired", "false").trim.equalsIgnoreCase("true")
    if (!required || !kryo(conf) || hasOurClasses(conf)) return None
    val listed = registrators(conf)
    Some(s"lists ${if (listed.isEmpty) "no registrator" else listed.mkString(", ")}, and " +
      s"spark.kryo.registrationRequired is true: add $Registrator to it (after your own, separated by a comma) " +
      "when the session starts; bloomindex's jobs send its own classes through Kryo")
  }

  /** Throws BLOOM_INDEX_INVALID_CONF where [[problem]] finds one. */
  def check(conf: SparkConf): Unit =
    problem(conf).foreach(p => throw BloomIndexErrors.invalidConf("spark.kryo.registrator", p))

  /** Whether `spark.serializer` is Kryo's (or a subclass; by name where the class cannot be loaded). */
  private def kryo(conf: SparkConf): Boolean = conf.getOption("spark.serializer").map(_.trim).exists { name =>
    try classOf[KryoSerializer].isAssignableFrom(Class.forName(name, false, loader))
    catch { case _: ClassNotFoundException | _: LinkageError => name.contains("Kryo") }
  }

  /**
   * Whether the session's Kryo, made as its tasks make it (registrators, classes to register),
   * has [[ConfWritable]] registered: our registrator listed, or one of the user's doing its work.
   * Where that Kryo cannot be made here, whether our registrator is listed by name.
   */
  private def hasOurClasses(conf: SparkConf): Boolean =
    registered.computeIfAbsent(Keys.map(conf.getOption), _ => {
      try Boolean.box(new KryoSerializer(conf).newKryo().getClassResolver.getRegistration(classOf[ConfWritable]) != null)
      catch {
        case NonFatal(_) | _: LinkageError => Boolean.box(registrators(conf).contains(Registrator))
      }
    }).booleanValue

  private def registrators(conf: SparkConf): Seq[String] =
    conf.get("spark.kryo.registrator", "").split(',').map(_.trim).filter(_.nonEmpty).toSeq

  private def loader: ClassLoader = Option(Thread.currentThread.getContextClassLoader).getOrElse(getClass.getClassLoader)
}
