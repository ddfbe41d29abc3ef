"""Random strings, random text predicates and a model of them, in plain Python, for the text search
suite (tests/test_text_search.py).

- :func:`make_files`: the values of a small table, file by file: words from a rich alphabet
  (multi-byte UTF-8, combining marks, emoji and other supplementary code points, mixed case,
  Greek sigma, Turkish dotted I, the Kelvin sign, separators at the edges, ``_``, ``%`` and ``\\``
  inside values, empty strings, NULLs). Each file draws most words from a vocabulary of its own,
  so a pattern taken from one of its values matches in few files: pruning really happens.
- :class:`PatternGenerator`: predicates (SQL text with a ``{c}`` placeholder for the column) over
  those values: LIKE with and without ESCAPE (``_`` and ``%`` in every position, escaped literal
  ``_``, ``%`` and escape characters, patterns shorter than n, empty), ILIKE, ``lower(c) LIKE``,
  contains / startswith / endswith / instr / locate, ``=``, ``IN``, RLIKE with literal runs, and
  AND / OR / NOT over them. Each predicate also comes as a small tree the model below evaluates.
- The model: :func:`evaluate` answers a predicate for one value in Python (SQL's three-valued
  logic; LIKE as Spark reads it, code point by code point), and :func:`requirement` says which
  tokens or n-grams a perfect filter would need for it, by the rules of issue 25 (the scaladoc of
  ``bloomindex.text.TextSearch``), so the suite can tell which predicates should prune.

Python's ``str.lower`` stands in for Spark's ``lower()`` (ICU, root locale) and
``unicodedata`` for ``Character.isLetterOrDigit``: equal on this alphabet, which avoids
characters new in recent Unicode versions. The model never decides a test's verdict about the
index: the oracle is Spark itself, with the index off.
"""

from __future__ import annotations

import dataclasses
import functools
import random
import re
import unicodedata

# ---------------------------------------------------------------------------------------------
# The alphabet

ASCII_LOWER = "abcdefghijklmnopqrstuvwxyz"
ASCII_UPPER = ASCII_LOWER.upper()
DIGITS = "0123456789"
# Letters and digits beyond ASCII: 2-, 3- and 4-byte UTF-8; case pairs whose lower() changes the
# length (İ: 'i' + U+0307), depends on context (Σ: final ς or σ), or leaves ASCII (K: Kelvin
# sign -> 'k'); a title-case letter; letters and digits outside the BMP (surrogate pairs in Java).
EXOTIC_LETTERS = [
    "é", "É", "ß", "ñ", "Ö", "ø", "Σ", "σ", "ς", "Α", "λ", "Ж", "ж", "İ", "ı", "\u212a", "ǅ",
    "日", "本", "語", "中", "文", "한", "ア", "٣", "\U0001d49c", "\U0001d7d8", "\U00010400",
    "\U00010428", "ﬁ",
]
COMBINING = ["\u0301", "\u0308"]  # combining acute, diaeresis: separators by default (category Mn)
EMOJI = ["\U0001f600", "\U0001f680", "\U0001f44d\U0001f3fd", "\U0001f468\u200d\U0001f469\u200d\U0001f467",
         "\U0001f1eb\U0001f1f7", "\u2764\ufe0f"]
# Between words: the default separators (not a letter or digit) including SQL's LIKE wildcards,
# the default escape, a quote, a tab, a superscript digit (category No: a separator in Java,
# although Python's isalnum() says otherwise).
SEPARATORS = [" ", " ", " ", " ", "-", "_", "/", ".", ":", "=", ",", "%", "\\", "'", "\t", "\u00b2", "#"]
# The separators of the `separators` option of the suite's custom-token column.
CUSTOM_SEPARATORS = " _/"

REGEX_SPECIAL = set("\\.[]{}()*+?^$|")


def is_letter_or_digit(ch: str) -> bool:
    """Java's Character.isLetterOrDigit: general category L* or Nd."""
    cat = unicodedata.category(ch)
    return cat[0] == "L" or cat == "Nd"


def fold(s: str) -> str:
    """Spark's lower() (ICU, root locale), as far as this alphabet goes."""
    return s.lower()


# ---------------------------------------------------------------------------------------------
# Filters' specifications, and their units

@dataclasses.dataclass(frozen=True)
class Spec:
    kind: str  # "tokens", "ngrams" or "equality"
    n: int = 0
    lower: bool = False
    separators: str | None = None  # tokens: None = not a letter or digit

    def is_separator(self, ch: str) -> bool:
        return ch in self.separators if self.separators is not None else not is_letter_or_digit(ch)

    def units(self, value: str) -> set[str]:
        v = fold(value) if self.lower else value
        if self.kind == "equality":
            return {value}
        if self.kind == "ngrams":
            return {v[i:i + self.n] for i in range(len(v) - self.n + 1)}
        out, cur = set(), []
        for ch in v:
            if self.is_separator(ch):
                if cur:
                    out.add("".join(cur))
                cur = []
            else:
                cur.append(ch)
        if cur:
            out.add("".join(cur))
        return out


# ---------------------------------------------------------------------------------------------
# Values

def _word(rng: random.Random) -> str:
    n = rng.choice([1, 2, 3, 3, 4, 4, 5, 5, 6, 7, 8, 10])
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.55:
            out.append(rng.choice(ASCII_LOWER))
        elif r < 0.65:
            out.append(rng.choice(ASCII_UPPER))
        elif r < 0.72:
            out.append(rng.choice(DIGITS))
        elif r < 0.92:
            out.append(rng.choice(EXOTIC_LETTERS))
        elif r < 0.96 and out:
            out.append(rng.choice(COMBINING))  # after a letter: a decomposed accent
        else:
            out.append(rng.choice(EMOJI))  # inside a word: splits it into two tokens
    return "".join(out)


def _recase(rng: random.Random, w: str) -> str:
    r = rng.random()
    if r < 0.3:
        return w.upper()
    if r < 0.5:
        return w.title()
    return "".join(ch.upper() if rng.random() < 0.5 else ch for ch in w)


def _value(rng: random.Random, own: list[str], common: list[str]) -> str | None:
    r = rng.random()
    if r < 0.04:
        return None
    if r < 0.07:
        return ""
    if r < 0.09:
        return rng.choice(SEPARATORS) * rng.randint(1, 3)  # separators only
    words = []
    for _ in range(rng.choice([1, 1, 2, 2, 3, 3, 4, 5, 6])):
        w = rng.choice(own) if rng.random() < 0.75 else rng.choice(common)
        if rng.random() < 0.25:
            w = _recase(rng, w)
        words.append(w)
    out = [words[0]]
    for w in words[1:]:
        out.append(rng.choice(SEPARATORS) * (2 if rng.random() < 0.1 else 1))
        out.append(w)
    s = "".join(out)
    if rng.random() < 0.15:
        s = rng.choice(SEPARATORS) + s
    if rng.random() < 0.15:
        s = s + rng.choice(SEPARATORS)
    return s


def make_files(seed: int, n_files: int, rows_per_file: int) -> list[dict]:
    """Per file: ``{"s": [values], "t": [values]}``; ``s`` is the indexed text (every variant
    column of the suite holds it), ``t`` another text column with values of other files'
    vocabularies (for predicates over two columns)."""
    rng = random.Random(seed)
    common = sorted({_word(rng) for _ in range(15)})
    vocab = [sorted({_word(rng) for _ in range(25)}) for _ in range(n_files)]
    files = []
    for f in range(n_files):
        s = [_value(rng, vocab[f], common) for _ in range(rows_per_file)]
        other = vocab[(f * 7 + 3) % n_files]
        t = [_value(rng, other, common) for _ in range(rows_per_file)]
        files.append({"s": s, "t": t})
    return files


# ---------------------------------------------------------------------------------------------
# Patterns: elements, one per code point a pattern stands for

ONE = "ONE"    # `_`
MANY = "MANY"  # `%`


def like_text(elements: list, escape: str) -> str:
    """The LIKE pattern text of `elements` with `escape` as the escape character: a literal `_`,
    `%` or escape character is escaped; a wildcard is written plainly (the generator never asks
    for the wildcard that is the escape character itself)."""
    out = []
    for e in elements:
        if e == ONE:
            assert escape != "_"
            out.append("_")
        elif e == MANY:
            assert escape != "%"
            out.append("%")
        elif e in ("_", "%", escape):
            out.append(escape + e)
        else:
            out.append(e)
    return "".join(out)


def parse_like(pattern: str, escape: str = "\\") -> list | None:
    """Spark 4's reading of LIKE, code point by code point; None when Spark fails the query."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == escape:
            if i + 1 == len(pattern) or pattern[i + 1] not in ("_", "%", escape):
                return None
            out.append(pattern[i + 1])
            i += 2
        else:
            out.append(ONE if c == "_" else MANY if c == "%" else c)
            i += 1
    return out


@functools.lru_cache(maxsize=None)
def _compiled(rx: str, flags: int) -> "re.Pattern":
    return re.compile(rx, flags)


def like_matches(value: str, elements: list) -> bool:
    return _like_regex(elements).fullmatch(value) is not None


# ---------------------------------------------------------------------------------------------
# Predicates: a tree the model evaluates, and its SQL with {c} for the column

@dataclasses.dataclass
class Atom:
    op: str              # like, ilike, lower_like, contains, startswith, endswith, eq, in, rlike
    col: str             # "{c}" or "t"
    arg: object          # like kinds: the pattern text; eq: a string; in: a list; rlike: the regex
    escape: str = "\\"   # like kinds
    runs: list | None = None  # rlike: the elements every match holds (literal runs between MANY)
    pyregex: str = ""    # rlike: the same expression for Python's re (\\Q...\\E spelled out)
    form: str = ""       # how contains-like ops are written: contains, instr, locate, position
    sql: str = ""


@dataclasses.dataclass
class Not:
    child: object
    sql: str = ""


@dataclasses.dataclass
class Bool:
    op: str  # "AND" / "OR"
    children: list
    sql: str = ""


def sql_string(s: str) -> str:
    """A Spark SQL string literal of `s` (every backslash and quote escaped)."""
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _atom_sql(a: Atom) -> str:
    c = a.col
    lit = sql_string
    if a.op in ("like", "ilike", "lower_like"):
        lhs = f"lower({c})" if a.op == "lower_like" else c
        kw = "ILIKE" if a.op == "ilike" else "LIKE"
        esc = "" if a.escape == "\\" and a.form != "explicit" else f" ESCAPE {lit(a.escape)}"
        return f"{lhs} {kw} {lit(a.arg)}{esc}"
    if a.op == "contains":
        if a.form == "instr":
            return f"instr({c}, {lit(a.arg)}) > 0"
        if a.form == "locate":
            return f"locate({lit(a.arg)}, {c}) > 0"
        if a.form == "position":
            return f"position({lit(a.arg)} IN {c}) > 0"
        return f"contains({c}, {lit(a.arg)})"
    if a.op == "startswith":
        return f"startswith({c}, {lit(a.arg)})"
    if a.op == "endswith":
        return f"endswith({c}, {lit(a.arg)})"
    if a.op == "eq":
        return f"{lit(a.arg)} = {c}" if a.form == "flipped" else f"{c} = {lit(a.arg)}"
    if a.op == "in":
        return f"{c} IN ({', '.join(lit(v) for v in a.arg)})"
    if a.op == "rlike":
        return f"{c} RLIKE {lit(a.arg)}"
    raise AssertionError(a.op)


def to_sql(p) -> str:
    if isinstance(p, Atom):
        p.sql = _atom_sql(p)
    elif isinstance(p, Not):
        p.sql = f"NOT ({to_sql(p.child)})"
    else:
        p.sql = "(" + f" {p.op} ".join(to_sql(ch) for ch in p.children) + ")"
    return p.sql


def _like_regex(elements: list) -> "re.Pattern":
    return _compiled("".join("." if e == ONE else ".*" if e == MANY else re.escape(e) for e in elements), re.DOTALL)


@functools.lru_cache(maxsize=100_000)
def _folded(value: str) -> str:
    return fold(value)


def _atom_test(p: Atom):
    """A function of the value (not NULL) that answers atom `p`."""
    if p.op == "like":
        rx = _like_regex(parse_like(p.arg, p.escape))
        return lambda v: rx.fullmatch(v) is not None
    if p.op == "ilike":
        rx = _like_regex(parse_like(fold(p.arg), p.escape))
        return lambda v: rx.fullmatch(_folded(v)) is not None
    if p.op == "lower_like":
        rx = _like_regex(parse_like(p.arg, p.escape))
        return lambda v: rx.fullmatch(_folded(v)) is not None
    if p.op == "contains":
        return lambda v: p.arg in v
    if p.op == "startswith":
        return lambda v: v.startswith(p.arg)
    if p.op == "endswith":
        return lambda v: v.endswith(p.arg)
    if p.op == "eq":
        return lambda v: v == p.arg
    if p.op == "in":
        return lambda v: v in p.arg
    if p.op == "rlike":
        rx = _compiled(p.pyregex, re.ASCII)
        return lambda v: rx.search(v) is not None
    raise AssertionError(p.op)


def evaluate(p, row: dict) -> bool | None:
    """The predicate on one row ({"s": ..., "t": ...}), with SQL's NULL logic."""
    if isinstance(p, Not):
        v = evaluate(p.child, row)
        return None if v is None else not v
    if isinstance(p, Bool):
        vals = [evaluate(ch, row) for ch in p.children]
        if p.op == "AND":
            return False if False in vals else None if None in vals else True
        return True if True in vals else None if None in vals else False
    value = row["t" if p.col == "t" else "s"]
    if value is None:
        return None
    test = p.__dict__.get("_test")
    if test is None:
        test = p.__dict__["_test"] = _atom_test(p)
    return test(value)


def involves_folding(p) -> bool:
    if isinstance(p, Atom):
        return p.op in ("ilike", "lower_like")
    if isinstance(p, Not):
        return involves_folding(p.child)
    return any(involves_folding(ch) for ch in p.children)


def atoms(p) -> list:
    if isinstance(p, Atom):
        return [p]
    if isinstance(p, Not):
        return atoms(p.child)
    return [a for ch in p.children for a in atoms(ch)]


# ---------------------------------------------------------------------------------------------
# Requirements: what a perfect filter of a spec needs for a predicate (issue 25's rules)

NONE = ("none",)


def _units_of_elements(spec: Spec, elements: list):
    units = set()
    if spec.kind == "ngrams":
        run = []
        for e in elements + [MANY]:
            if e in (ONE, MANY):
                units |= {"".join(run[i:i + spec.n]) for i in range(len(run) - spec.n + 1)}
                run = []
            else:
                run.append(e)
    else:
        def sep(e):
            return e not in (ONE, MANY) and spec.is_separator(e)
        i = 0
        while i < len(elements):
            e = elements[i]
            if e in (ONE, MANY) or spec.is_separator(e):
                i += 1
                continue
            j = i
            while j < len(elements) and elements[j] not in (ONE, MANY) and not spec.is_separator(elements[j]):
                j += 1
            before = i == 0 or sep(elements[i - 1])
            after = j == len(elements) or sep(elements[j])
            if before and after:
                units.add("".join(elements[i:j]))
            i = j
    return ("all", frozenset(units)) if units else NONE


def _and(a, b):
    if a == NONE:
        return b
    if b == NONE:
        return a
    return ("and", (a, b))


def _or(a, b):
    if a == NONE or b == NONE:
        return NONE
    return ("or", (a, b))


def _atom_requirement(spec: Spec, a: Atom):
    if spec.kind == "equality":
        if a.op == "eq":
            return ("all", frozenset([a.arg]))
        if a.op == "in":
            r = ("all", frozenset([a.arg[0]]))
            for v in a.arg[1:]:
                r = _or(r, ("all", frozenset([v])))
            return r
        if a.op == "like":
            el = parse_like(a.arg, a.escape)
            if el is not None and ONE not in el and MANY not in el:
                return ("all", frozenset(["".join(el)]))
        return NONE
    on_lower = a.op in ("ilike", "lower_like")
    if on_lower and not spec.lower:
        return NONE
    if a.op in ("eq", "in"):
        vals = [a.arg] if a.op == "eq" else a.arg
        r = None
        for v in vals:
            one = _units_of_elements(spec, list(fold(v) if spec.lower else v))
            r = one if r is None else _or(r, one)
        return r
    if a.op in ("like", "ilike", "lower_like"):
        text = fold(a.arg) if a.op == "ilike" else a.arg
        el = parse_like(text, a.escape)
        if el is None:
            return NONE
        if ONE not in el and MANY not in el:  # an equality
            lit = "".join(el)
            return _units_of_elements(spec, list(fold(lit) if spec.lower and a.op == "like" else lit))
    elif a.op == "contains":
        el = [MANY] + list(a.arg) + [MANY]
    elif a.op == "startswith":
        el = list(a.arg) + [MANY]
    elif a.op == "endswith":
        el = [MANY] + list(a.arg)
    elif a.op == "rlike":
        el = a.runs
    else:
        raise AssertionError(a.op)
    if spec.lower and not on_lower:
        return NONE  # a case-sensitive predicate on a folded filter
    return _units_of_elements(spec, el)


def requirement(specs_by_col: dict, p):
    """The requirement of predicate `p` when its columns carry the filters `specs_by_col`
    ({"{c}": [Spec, ...], "t": [...]}): several filters on one column must all hold."""
    if isinstance(p, Not):
        return NONE
    if isinstance(p, Bool):
        r = requirement(specs_by_col, p.children[0])
        for ch in p.children[1:]:
            r2 = requirement(specs_by_col, ch)
            r = _and(r, r2) if p.op == "AND" else _or(r, r2)
        return r
    r = NONE
    for spec in specs_by_col.get(p.col, []):
        r = _and(r, _atom_requirement(spec, p))
    return r


def may_match(req, holds) -> bool:
    """Whether a file may hold a match: `holds(unit_key)` says whether its filter holds a unit;
    units are keyed (spec, unit)."""
    if req == NONE:
        return True
    if req[0] == "all":
        return all(holds(u) for u in req[1])
    if req[0] == "and":
        return all(may_match(r, holds) for r in req[1])
    return any(may_match(r, holds) for r in req[1])


def requirement_keyed(specs_by_col: dict, p):
    """As :func:`requirement`, each unit tagged with its column and spec: ((col, spec), unit)."""
    def tag(req, key):
        if req == NONE:
            return NONE
        if req[0] == "all":
            return ("all", frozenset((key, u) for u in req[1]))
        return (req[0], tuple(tag(r, key) for r in req[1]))

    if isinstance(p, Not):
        return NONE
    if isinstance(p, Bool):
        r = requirement_keyed(specs_by_col, p.children[0])
        for ch in p.children[1:]:
            r2 = requirement_keyed(specs_by_col, ch)
            r = _and(r, r2) if p.op == "AND" else _or(r, r2)
        return r
    r = NONE
    for spec in specs_by_col.get(p.col, []):
        r = _and(r, tag(_atom_requirement(spec, p), (p.col, spec)))
    return r


# ---------------------------------------------------------------------------------------------
# The generator

ESCAPES = ["\\", "\\", "\\", "#", "!", "a", "é", "_", "%", "\\"]


class PatternGenerator:
    """Random predicates over the values of `files` (from :func:`make_files`)."""

    def __init__(self, files: list[dict], seed: int):
        self.rng = random.Random(seed)
        self.s_values = [[v for v in f["s"] if v] for f in files]
        self.t_values = [v for f in files for v in f["t"] if v]
        self.all_s = [v for f in files for v in f["s"] if v is not None]

    # -- pieces of values

    def _source(self, col: str) -> str:
        rng = self.rng
        if col == "t":
            return rng.choice(self.t_values)
        r = rng.random()
        if r < 0.85:
            return rng.choice(rng.choice(self.s_values))
        if r < 0.95:
            return _word(rng)  # most likely absent
        return rng.choice(self.all_s)

    def _substring(self, v: str) -> str:
        rng = self.rng
        if not v:
            return v
        r = rng.random()
        if r < 0.15:
            length = rng.randint(1, 2)  # shorter than n
        elif r < 0.25:
            return v
        else:
            length = rng.randint(3, 12)
        start = rng.randint(0, max(0, len(v) - 1))
        return v[start:start + length]

    def _mutate(self, s: str) -> str:
        """Usually nothing; sometimes a case change or a replaced code point (likely absent)."""
        rng = self.rng
        r = rng.random()
        if r < 0.15 and s:
            i = rng.randrange(len(s))
            s = s[:i] + rng.choice(ASCII_LOWER + "".join(EXOTIC_LETTERS[:10]) + "".join(EMOJI[:2])) + s[i + 1:]
        elif r < 0.3:
            s = _recase(rng, s)
        return s

    # -- atoms

    def _like_elements(self, lit: str, escape: str) -> list:
        rng = self.rng
        el = list(lit)
        out = []
        can_one, can_many = escape != "_", escape != "%"
        anchor = rng.random()
        if can_many and anchor < 0.45:
            out.append(MANY)
        for ch in el:
            r = rng.random()
            if can_one and r < 0.08:
                out.append(ONE)  # `_` for one code point (an emoji's, a combining mark's)
            elif can_many and r < 0.12:
                out.append(ch)
                out.append(MANY)  # `%` inside
            else:
                out.append(ch)
        if can_many and (anchor < 0.3 or 0.6 < anchor < 0.85):
            out.append(MANY)
        if rng.random() < 0.05:
            out = [MANY] if can_many else []  # '%' or ''
        if can_one and rng.random() < 0.05:
            out = [ONE] * rng.randint(1, 3) + out  # leading `_`s
        return out

    def _atom(self, col: str) -> Atom:
        rng = self.rng
        kind = rng.choices(
            ["like", "ilike", "lower_like", "contains", "startswith", "endswith", "eq", "in", "rlike"],
            weights=[32, 10, 4, 12, 6, 6, 10, 6, 14])[0]
        src = self._source(col)
        if kind in ("like", "ilike", "lower_like"):
            escape = rng.choice(ESCAPES)
            lit = self._mutate(self._substring(src))
            if kind == "lower_like" and rng.random() < 0.7:
                lit = fold(lit)
            text = like_text(self._like_elements(lit, escape), escape)
            if kind == "ilike" and parse_like(fold(text), escape) is None:
                # Spark lowers an ILIKE pattern whole, escapes included: 'É' ESCAPE 'é' would be an
                # escape before something else (Spark fails the query); the default escape then.
                escape = "\\"
                text = like_text(self._like_elements(lit, escape), escape)
            form = "explicit" if escape == "\\" and rng.random() < 0.3 else ""
            return Atom(kind, col, text, escape=escape, form=form)
        if kind in ("contains", "startswith", "endswith"):
            lit = self._mutate(self._substring(src))
            if kind == "startswith" and rng.random() < 0.6:
                lit = self._mutate(src[:rng.randint(0, 8)])
            if kind == "endswith" and rng.random() < 0.6:
                lit = self._mutate(src[-rng.randint(1, 8):])
            form = rng.choice(["contains", "contains", "instr", "locate", "position"]) if kind == "contains" else ""
            return Atom(kind, col, lit, form=form)
        if kind == "eq":
            v = src if rng.random() < 0.7 else self._mutate(src)
            if rng.random() < 0.05:
                v = ""
            return Atom("eq", col, v, form="flipped" if rng.random() < 0.2 else "")
        if kind == "in":
            vals = [self._source(col) if rng.random() < 0.7 else self._mutate(self._source(col))
                    for _ in range(rng.choice([1, 2, 3, 5]))]
            return Atom("in", col, vals)
        return self._rlike(col, src)

    def _rlike(self, col: str, src: str) -> Atom:
        """A regular expression of literal pieces of `src` and opaque constructs between them;
        `runs` holds the pieces every match contains (as LIKE elements)."""
        rng = self.rng
        lit = self._mutate(self._substring(src)) or "x"
        cuts = sorted(rng.sample(range(1, len(lit)), k=min(len(lit) - 1, rng.randint(0, 2))))
        pieces, prev = [], 0
        for cut in cuts + [len(lit)]:
            pieces.append(lit[prev:cut])
            prev = cut
        java, py, runs = [], [], [MANY]

        def both(text):  # the same in Java's and Python's syntax
            java.append(text)
            py.append(text)

        def esc(ch):
            if ch in REGEX_SPECIAL or (ch in "-#&~ '\t%_=" and rng.random() < 0.5):
                return "\\" + ch
            return ch

        if rng.random() < 0.1:
            both("^")
        for i, piece in enumerate(pieces):
            if i:
                both(rng.choice([".", ".*", ".+", "\\d*", "[a-z]?", "(x|y)?", "\\s?", "\\w*", "[^/]*", ".{0,2}"]))
                if runs[-1] != MANY:
                    runs.append(MANY)
            chars = list(piece)
            if rng.random() < 0.1 and "\\E" not in piece:
                java.append("\\Q" + piece + "\\E")
                py.append(re.escape(piece))
                runs += chars
                continue
            for ch in chars[:-1]:
                both(esc(ch))
            runs += chars[:-1]
            last, quant = chars[-1], rng.random()
            if quant < 0.1:
                both(esc(last) + "?")  # optional: not required
                runs.append(MANY)
            elif quant < 0.2:
                both(esc(last) + "+")  # required, then the run ends
                runs += [last, MANY]
            elif quant < 0.25:
                both(esc(last) + "*")
                runs.append(MANY)
            elif quant < 0.3:
                both(esc(last) + "{2}")
                runs += [last, MANY]
            else:
                both(esc(last))
                runs.append(last)
        if rng.random() < 0.1:
            both("$")
        if runs[-1] != MANY:
            runs.append(MANY)
        text, pytext = "".join(java), "".join(py)
        if rng.random() < 0.04:  # inline flags (ASCII-only case folding in both): nothing can be required
            text, pytext, runs = "(?i)" + text, "(?i)" + pytext, [MANY]
        elif rng.random() < 0.04:  # an alternation at the top level: nothing either
            text, pytext, runs = text + "|zq", pytext + "|zq", [MANY]
        re.compile(pytext)
        return Atom("rlike", col, text, runs=runs, pyregex=pytext)

    def predicate(self):
        rng = self.rng
        r = rng.random()
        if r < 0.72:
            p = self._atom("{c}")
        elif r < 0.78:
            p = Not(self._atom("{c}"))
        else:
            op = rng.choice(["AND", "OR"])
            first = self._atom("{c}")
            second = rng.random()
            if second < 0.45:
                other = self._atom("{c}")
            elif second < 0.8:
                other = self._atom("t")
            else:
                other = Not(self._atom(rng.choice(["{c}", "t"])))
            p = Bool(op, [first, other] if rng.random() < 0.5 else [other, first])
            if rng.random() < 0.15:
                p = Not(p)
        to_sql(p)
        return p
