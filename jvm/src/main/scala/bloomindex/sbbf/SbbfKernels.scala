package bloomindex.sbbf

import org.slf4j.LoggerFactory

/**
 * Picks the kernel for this JVM: the Vector API one when the `jdk.incubator.vector` module
 * was added to the boot layer (`--add-modules jdk.incubator.vector`) and the CPU has 256-bit
 * integer vectors, the scalar one otherwise. Both set the same bits, so the choice only
 * changes speed; a missing flag never fails a job.
 *
 * The system property `bloomindex.kernel` (`vector` or `scalar`) overrides the choice, for
 * tests and benchmarks.
 */
object SbbfKernels {

  private val log = LoggerFactory.getLogger(getClass)

  val scalar: SbbfKernel = ScalarKernel.INSTANCE

  /** The vector kernel, when this JVM can run it natively. */
  lazy val vector: Option[SbbfKernel] = loadVectorKernel[SbbfKernel]("bloomindex.sbbf.VectorKernel")

  /**
   * `INSTANCE` of a Vector API kernel class when the module is in the boot layer and the
   * class's `hardwareSupported()` says the CPU runs it natively. Loaded by name so that callers
   * link without the incubator module.
   */
  private[bloomindex] def loadVectorKernel[K](className: String): Option[K] =
    if (!ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent) None
    else {
      try {
        val cls = Class.forName(className)
        val supported = cls.getMethod("hardwareSupported").invoke(null).asInstanceOf[Boolean]
        if (supported) Some(cls.getField("INSTANCE").get(null).asInstanceOf[K]) else None
      } catch {
        case e: LinkageError =>
          log.warn(s"Vector API present but unusable, $className falls back to a scalar kernel: $e")
          None
      }
    }

  /** The kernel filters use unless told otherwise. */
  lazy val default: SbbfKernel = sys.props.get("bloomindex.kernel") match {
    case Some(name) => byName(name)
    case None => vector.getOrElse(scalar)
  }

  /** `"vector"` or `"scalar"`; asking for the vector kernel where it cannot run is an error. */
  def byName(name: String): SbbfKernel = name.toLowerCase(java.util.Locale.ROOT) match {
    case "scalar" => scalar
    case "vector" => vector.getOrElse(throw new IllegalArgumentException(
      "kernel: 'vector' needs --add-modules jdk.incubator.vector and 256-bit SIMD"))
    case other => throw new IllegalArgumentException(
      s"kernel: unknown kernel '$other' (expected 'vector' or 'scalar')")
  }
}
