"""Issue 14: the `spark.bloomindex.*` configuration is typed Spark SQL entries: `SET -v` lists
every public key with its documentation, a value of the wrong type is refused when it is set
(naming the key), test hooks are internal, and README.md's table matches the entries."""

from __future__ import annotations

import pathlib
import re

import pytest
from pyspark.errors import IllegalArgumentException

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"
ROW = re.compile(r"^\| `(spark\.bloomindex\.[^`]+)` \|([^|]*)\|([^|]*)\|([^|]*)\|\s*$")


def _documented() -> dict[str, tuple[str, str]]:
    """README's configuration table: key -> (default cell, meaning cell)."""
    text = README.read_text()
    section = text[text.index("## Configuration"):]
    section = section[:section.index("\n## ", 1)]
    rows = {}
    for line in section.splitlines():
        m = ROW.match(line)
        if m:
            assert m.group(1) not in rows, f"{m.group(1)} documented twice"
            rows[m.group(1)] = (m.group(3).strip(), m.group(4).strip())
    return rows


def _set_v(session) -> dict[str, tuple[str, str, str]]:
    """`SET -v` of `session`: key -> (value, meaning, since), for the keys that name bloomindex."""
    out = {}
    for r in session.sql("SET -v").collect():
        if "bloomindex" in r[0]:
            assert r[0] not in out, f"{r[0]} listed twice"
            out[r[0]] = (r[1], r[2], r[3])
    return out


def test_every_public_key_is_listed_by_set_v_with_its_doc_and_documented_in_the_readme(spark):
    listed = _set_v(spark.newSession())  # a fresh session: the values shown are the defaults...
    # ...but for the keys the test session's builder sets (tests/conftest.py): their entries' own.
    entries = spark._jvm.org.apache.spark.sql.bloomindex.BloomIndexSQLConf
    for key, entry in (("spark.bloomindex.refresh.default", entries.REFRESH_DEFAULT()),
                       ("spark.bloomindex.fpp.default", entries.FPP_DEFAULT())):
        assert entry.key() == key
        value, doc, since = listed[key]
        listed[key] = (entry.defaultValueString(), doc, since)
    documented = _documented()
    # A key per URI scheme (issue 17) is a family: one entry whose key is the pattern, listed by
    # SET -v and documented like any other (issue 28).
    families = {k for k in documented if "<" in k}
    assert families == {"spark.bloomindex.logStore.<scheme>.impl"}, families
    assert {k for k in listed if "<" in k} == families, sorted(listed)
    assert "one per URI scheme" in listed["spark.bloomindex.logStore.<scheme>.impl"][1]
    assert listed and set(listed) == set(documented), (sorted(listed), sorted(documented))
    for key, (value, doc, since) in listed.items():
        assert key.startswith("spark.bloomindex."), key
        assert doc.strip() and since.strip(), key
        default, meaning = documented[key]
        assert meaning, key
        if value == "<undefined>":
            assert default.startswith("unset"), (key, default)
        else:
            assert default == f"`{value}`", (key, default, value)


def test_test_hooks_are_internal(spark):
    listed = _set_v(spark)
    assert not [k for k in listed if "test" in k], listed
    # Still settable (the fault tests use them), under the internal prefix only.
    key = "spark.internal.bloomindex.test.buildTaskDelayMs"
    session = spark.newSession()
    session.conf.set(key, "5")
    assert session.conf.get(key) == "5"
    with pytest.raises(IllegalArgumentException, match=re.escape(key)):
        session.conf.set(key, "soon")


@pytest.mark.parametrize("key,bad", [
    ("spark.bloomindex.pruning.enabled", "yes"),
    ("spark.bloomindex.joinFilter.enabled", "on"),
    ("spark.bloomindex.build.footerFilters", "1"),
    ("spark.bloomindex.build.maxDistinctPerFile", "many"),
    ("spark.bloomindex.build.maxDistinctPerFile", "0"),
    ("spark.bloomindex.fpp.default", "1.5"),
])
def test_a_bad_value_is_refused_when_set_naming_the_key(spark, key, bad):
    session = spark.newSession()
    before = session.conf.get(key)
    for set_it in (lambda: session.sql(f"SET {key}={bad}"), lambda: session.conf.set(key, bad)):
        with pytest.raises(IllegalArgumentException, match=re.escape(key)) as e:
            set_it()
        assert e.value.getCondition().startswith("INVALID_CONF_VALUE."), str(e.value)
        assert e.value.getSqlState() == "22022"
    assert session.conf.get(key) == before


def test_good_values_are_taken(spark):
    session = spark.newSession()
    session.sql("SET spark.bloomindex.pruning.enabled=FALSE")
    session.conf.set("spark.bloomindex.build.maxDistinctPerFile", "1000")
    assert session.conf.get("spark.bloomindex.pruning.enabled") == "FALSE"
    assert session.sql("SET spark.bloomindex.build.maxDistinctPerFile").collect()[0][1] == "1000"


def test_entries_register_once_across_sessions(spark):
    """Each new session applies the extension (which registers the entries) again: no
    duplicate registration, each key listed once."""
    sessions = [spark.newSession() for _ in range(3)]
    keys = [set(_set_v(s)) for s in sessions]
    assert keys[0] and all(k == keys[0] for k in keys)
