package bloomindex.text

/**
 * A pattern as a sequence of elements, one per code point of what it matches: a literal code point
 * (`>= 0`), [[LikePattern.One]] (`_`: exactly one code point) or [[LikePattern.Many]] (`%`: any
 * number). Patterns match whole values, so the sequence's ends are the value's ends.
 */
private[text] object LikePattern {

  final val One = -1
  final val Many = -2

  /**
   * `LIKE pattern ESCAPE escape` as Spark 4 reads it (`StringUtils.escapeLikeRegex`, code point by
   * code point): the escape character before `_`, `%` or itself makes that character literal; before
   * anything else, or last, it is an error Spark raises (`Left` says which). Checked before the
   * wildcards, so `ESCAPE '%'` makes `%` no wildcard at all. Any other code point is literal.
   */
  def parse(pattern: String, escape: Char): Either[String, Array[Int]] = {
    val cps = pattern.codePoints().toArray
    val out = Array.newBuilder[Int]
    var i = 0
    while (i < cps.length) {
      val c = cps(i)
      if (c == escape) {
        if (i + 1 == cps.length) return Left(s"the pattern ends with the escape character '$escape' (Spark fails the query)")
        val d = cps(i + 1)
        if (d != '_' && d != '%' && d != escape)
          return Left(s"the escape character '$escape' precedes '${new String(Character.toChars(d))}' (Spark fails the query)")
        out += d
        i += 2
      } else {
        out += (if (c == '_') One else if (c == '%') Many else c)
        i += 1
      }
    }
    Right(out.result())
  }

  def exactly(s: String): Array[Int] = s.codePoints().toArray

  def containing(s: String): Array[Int] = Many +: exactly(s) :+ Many

  def startingWith(s: String): Array[Int] = exactly(s) :+ Many

  def endingWith(s: String): Array[Int] = Many +: exactly(s)

  def hasWildcard(elements: Array[Int]): Boolean = elements.exists(_ < 0)

  /** The literal a wildcard-free sequence stands for. */
  def literalOf(elements: Array[Int]): String = new String(elements, 0, elements.length)
}
