package bloomindex.testing

/** Which bits of a file a flip test flips (issue 26: "in CI a sample; the whole run in a nightly
  * target"). `BLOOMINDEX_JVM_FLIPS`: `all` flips every bit (`make test-flips`, nightly); a number
  * N (default 500) flips every bit of the file's first and last 64 bytes (the magic, the
  * trailer: where one flip's effect is most particular) and N other bits drawn from a seed of the
  * file kind and size, so a CI run is repeatable and names what it flipped. */
object FlipSample {
  val Setting: String = "BLOOMINDEX_JVM_FLIPS"
  private val EdgeBytes = 64

  def bits(fileBytes: Int, kind: String): IndexedSeq[Int] = bits(fileBytes, kind, sys.env.getOrElse(Setting, "500"))

  def bits(fileBytes: Int, kind: String, setting: String): IndexedSeq[Int] = {
    val total = fileBytes * 8
    val n = setting.trim.toLowerCase match {
      case "all" => total
      case s => s.toIntOption.filter(_ >= 0).getOrElse(
        throw new IllegalArgumentException(s"$Setting must be `all` or a count of bits, not '$setting'"))
    }
    if (n >= total) return 0 until total
    val edges = ((0 until EdgeBytes * 8) ++ ((fileBytes - EdgeBytes).max(0) * 8 until total)).distinct.filter(_ < total)
    val rest = (0 until total).filterNot(edges.toSet)
    val random = new scala.util.Random(31L * kind.hashCode + fileBytes)
    (edges ++ random.shuffle(rest).take(n)).sorted
  }
}
