package bloomindex.filter

import bloomindex.sbbf.SbbfKernels
/**
 * Picks the classic filter's kernel, as [[bloomindex.sbbf.SbbfKernels]] does for the split
 * block ones: the Vector API kernel where the module is in the boot layer and the CPU has
 * 512-bit vectors (about twice as fast, `bench/algorithms.md`), the scalar one otherwise; both
 * set the same bits. `-Dbloomindex.classicKernel=scalar|vector` forces one.
 */
object ClassicKernels {

  val scalar: ClassicKernel = ClassicScalarKernel.INSTANCE

  /** The vector kernel, when this JVM can run it natively (512-bit vectors). */
  lazy val vector: Option[ClassicKernel] =
    SbbfKernels.loadVectorKernel[ClassicKernel]("bloomindex.filter.ClassicVectorKernel")

  lazy val default: ClassicKernel = sys.props.get("bloomindex.classicKernel") match {
    case Some(name) => byName(name)
    case None => vector.getOrElse(scalar)
  }

  def byName(name: String): ClassicKernel = name.toLowerCase(java.util.Locale.ROOT) match {
    case "scalar" => scalar
    case "vector" => vector.getOrElse(throw new IllegalArgumentException(
      "kernel: the classic 'vector' kernel needs --add-modules jdk.incubator.vector and 512-bit SIMD"))
    case other => throw new IllegalArgumentException(
      s"kernel: unknown kernel '$other' (expected 'vector' or 'scalar')")
  }
}
