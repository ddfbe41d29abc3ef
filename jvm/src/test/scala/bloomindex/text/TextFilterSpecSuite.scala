package bloomindex.text

import java.util.Locale

import com.ibm.icu.lang.UCharacter
import org.scalatest.funsuite.AnyFunSuite

class TextFilterSpecSuite extends AnyFunSuite {

  private val jdk = s"jdk-${Runtime.version().feature()}"
  private val icu = s"icu-${UCharacter.getUnicodeVersion}"

  test("settings read back; the fingerprint adds the Unicode data the settings depend on") {
    val cases = Seq(
      TextFilterSpec.ngrams(3) -> ("ngrams(3) case=none", "text/1 ngrams(3) case=none"),
      TextFilterSpec(TextKind.NGrams(2), CaseFolding.Lower) -> ("ngrams(2) case=lower", s"text/1 ngrams(2) case=lower unicode=$icu"),
      TextFilterSpec.tokens -> ("tokens separators=not-letter-or-digit case=none",
        s"text/1 tokens separators=not-letter-or-digit case=none unicode=$jdk"),
      TextFilterSpec(TextKind.Tokens(), CaseFolding.Lower) -> ("tokens separators=not-letter-or-digit case=lower",
        s"text/1 tokens separators=not-letter-or-digit case=lower unicode=$icu,$jdk"),
      TextFilterSpec(TextKind.Tokens(), CaseFolding.LowerJdk) -> ("tokens separators=not-letter-or-digit case=lower-jdk",
        s"text/1 tokens separators=not-letter-or-digit case=lower-jdk unicode=$jdk"),
      TextFilterSpec(TextKind.Tokens(Separators.Only.of(", ")), CaseFolding.Off) -> ("tokens separators=U+0020,U+002C case=none",
        "text/1 tokens separators=U+0020,U+002C case=none"))
    for ((spec, (settings, fingerprint)) <- cases) {
      assert(spec.settings == settings)
      assert(spec.fingerprint == fingerprint)
      assert(TextFilterSpec.parse(settings) == spec)
    }
    assert(TextFilterSpec.parse("tokens") == TextFilterSpec.tokens)
    assert(TextFilterSpec.parse(" ngrams(4)  case=lower ") == TextFilterSpec(TextKind.NGrams(4), CaseFolding.Lower))
    assert(TextFilterSpec.parse("tokens separators=U+1F600") == TextFilterSpec(TextKind.Tokens(Separators.Only(Set(0x1F600)))))
  }

  test("settings that mean nothing are refused") {
    for (bad <- Seq("ngrams(0)", "ngrams(17)", "ngrams(3) separators=U+0020", "words", "tokens case=upper",
        "tokens separators=,", "tokens separators=U+110000", "tokens fpp=0.1"))
      intercept[IllegalArgumentException](TextFilterSpec.parse(bad))
  }

  test("the foldings are Spark's lower() (checked against Spark in TextSoundnessSuite); the root locale's") {
    assert(CaseFolding.Lower.fold("ABC def") == "abc def")
    assert(CaseFolding.Lower.fold("İ") == "i\u0307" && CaseFolding.LowerJdk.fold("İ") == "i\u0307")
    assert(CaseFolding.Lower.fold("ΟΔΟΣ ΟΔΟΣ.") == "\u03bf\u03b4\u03bf\u03c2 \u03bf\u03b4\u03bf\u03c2.", "final sigmas")
    assert(CaseFolding.Off.fold("ABC") == "ABC")
    assert(CaseFolding.foldsAsRoot(Locale.US) && CaseFolding.foldsAsRoot(Locale.ROOT) && CaseFolding.foldsAsRoot(Locale.GERMAN))
    assert(!CaseFolding.foldsAsRoot(Locale.forLanguageTag("tr-TR")) && !CaseFolding.foldsAsRoot(Locale.forLanguageTag("az")))
    assert(!CaseFolding.foldsAsRoot(Locale.forLanguageTag("lt")))
  }
}
