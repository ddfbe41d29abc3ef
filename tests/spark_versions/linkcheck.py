"""Link check: does every reference of bloomindex.jar into Spark's jars resolve in another Spark?

Reads the constant pool of each class in the jar (classes, methods and fields it refers to) and
looks each one up, with its exact descriptor, in the jars of a Spark distribution (a PySpark
wheel's ``pyspark/jars``), walking superclasses and interfaces as the JVM does. A reference that
does not resolve would be a ``NoClassDefFoundError`` / ``NoSuchMethodError`` / ``NoSuchFieldError``
at run time. And each of our concrete classes must implement every abstract method of the Spark
types it extends or implements, as that Spark declares them (else an ``AbstractMethodError``
when Spark calls one).

    python tests/spark_versions/linkcheck.py python/bloomindex/jars/bloomindex.jar <pyspark/jars>
"""

from __future__ import annotations

import os
import shutil
import struct
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

# Packages resolved against the Spark jars folder (everything else: the JDK, zero-allocation-hashing).
CHECKED_PREFIXES = ("org/apache/spark/", "org/apache/parquet/", "org/apache/hadoop/", "scala/",
                    "com/fasterxml/jackson/", "org/apache/orc/", "org/apache/avro/")


ACC_INTERFACE, ACC_ABSTRACT = 0x0200, 0x0400


@dataclass
class ClassInfo:
    name: str
    super_name: str | None
    interfaces: list[str]
    methods: set[tuple[str, str]]
    fields: set[tuple[str, str]]
    access: int = 0
    abstract_methods: set[tuple[str, str]] = frozenset()

    @property
    def concrete(self) -> bool:
        return not self.access & (ACC_INTERFACE | ACC_ABSTRACT)


def _parse(data: bytes, members: bool = True):
    """(this class, super, interfaces, methods, fields, references) of one class file."""
    pos = 10
    (count,) = struct.unpack_from(">H", data, 8)
    pool: list = [None] * count
    i = 1
    while i < count:
        tag = data[pos]
        pos += 1
        if tag == 1:
            (n,) = struct.unpack_from(">H", data, pos)
            pool[i] = ("utf8", data[pos + 2:pos + 2 + n].decode("utf-8", "replace"))
            pos += 2 + n
        elif tag in (3, 4):
            pos += 4
        elif tag in (5, 6):
            pos += 8
            i += 1
        elif tag in (7, 8, 16, 19, 20):
            pool[i] = ("class" if tag == 7 else "other", struct.unpack_from(">H", data, pos)[0])
            pos += 2
        elif tag in (9, 10, 11, 12, 17, 18):
            a, b = struct.unpack_from(">HH", data, pos)
            kind = {9: "field", 10: "method", 11: "imethod", 12: "nat"}.get(tag, "other")
            pool[i] = (kind, a, b)
            pos += 4
        elif tag == 15:
            pos += 3
        else:
            raise ValueError(f"bad constant pool tag {tag}")
        i += 1

    def utf(k):
        return pool[k][1]

    def cls(k):
        return utf(pool[k][1])

    access, this, sup = struct.unpack_from(">HHH", data, pos)
    pos += 6
    (n_if,) = struct.unpack_from(">H", data, pos)
    pos += 2
    interfaces = [cls(struct.unpack_from(">H", data, pos + 2 * j)[0]) for j in range(n_if)]
    pos += 2 * n_if
    tables = []
    abstract = set()
    for table in range(2):  # fields, then methods
        (n,) = struct.unpack_from(">H", data, pos)
        pos += 2
        entries = set()
        for _ in range(n):
            acc, name, desc, attrs = struct.unpack_from(">HHHH", data, pos)
            pos += 8
            for _ in range(attrs):
                (length,) = struct.unpack_from(">I", data, pos + 2)
                pos += 6 + length
            entries.add((utf(name), utf(desc)))
            if table == 1 and acc & ACC_ABSTRACT:
                abstract.add((utf(name), utf(desc)))
        tables.append(entries)
    info = ClassInfo(cls(this), cls(sup) if sup else None, interfaces, tables[1], tables[0], access, abstract)
    refs = []
    if members:
        for e in pool:
            if e and e[0] in ("field", "method", "imethod"):
                nat = pool[e[2]]
                refs.append((e[0], cls(e[1]), utf(nat[1]), utf(nat[2])))
            elif e and e[0] == "class":
                refs.append(("class", utf(e[1]), "", ""))
    return info, refs


# java.lang.Object's methods, for JDK classes where no java.base.jmod is at hand to read.
OBJECT_METHODS = {"equals", "hashCode", "toString", "getClass", "clone", "finalize", "notify",
                  "notifyAll", "wait"}


def _jdk_jmods() -> list[Path]:
    """The JDK's jmod files (zip files behind a 4-byte header; classes under classes/)."""
    java = shutil.which("java")
    if not java:
        return []
    return sorted((Path(os.path.realpath(java)).parent.parent / "jmods").glob("*.jmod"))


class ClassPath:
    def __init__(self, jars_dir: Path):
        self.index: dict[str, tuple[Path, str]] = {}
        for jar in sorted(jars_dir.glob("*.jar")):
            with zipfile.ZipFile(jar) as z:
                for n in z.namelist():
                    if n.endswith(".class"):
                        self.index.setdefault(n[:-6], (jar, n))
        self.jdk = False
        for jmod in _jdk_jmods():
            self.jdk = True
            with zipfile.ZipFile(jmod) as z:
                for n in z.namelist():
                    if n.startswith("classes/") and n.endswith(".class"):
                        self.index.setdefault(n[8:-6], (jmod, n))
        self.cache: dict[str, ClassInfo | None] = {}
        self.open: dict[Path, zipfile.ZipFile] = {}

    def get(self, name: str) -> ClassInfo | None:
        if name not in self.cache:
            where = self.index.get(name)
            if where is None:
                self.cache[name] = None
            else:
                jar, entry = where
                z = self.open.setdefault(jar, zipfile.ZipFile(jar))
                self.cache[name] = _parse(z.read(entry), members=False)[0]
        return self.cache[name]

    def resolves(self, kind: str, owner: str, name: str, desc: str) -> bool:
        """Whether the member is declared by owner, a superclass or an interface."""
        seen = set()
        todo = [owner]
        while todo:
            c = todo.pop()
            if c in seen:
                continue
            seen.add(c)
            info = self.get(c)
            if info is None:
                if not self.jdk and c.startswith("java/") and name in OBJECT_METHODS:
                    return True
                continue
            members = info.fields if kind == "field" else info.methods
            if (name, desc) in members:
                return True
            todo.extend(info.interfaces)
            if info.super_name:
                todo.append(info.super_name)
        return False


def _unimplemented(cp: ClassPath, info: ClassInfo) -> list[str]:
    """The abstract methods of a concrete class's supertypes that neither the class nor a
    superclass implements and no interface gives a default for: an AbstractMethodError when
    Spark calls one (a method Spark added to a trait or abstract class we extend)."""
    chain, interfaces, seen = [], [], set()
    c = info
    while c is not None:
        chain.append(c)
        todo = list(c.interfaces)
        while todo:
            i = todo.pop()
            if i not in seen:
                seen.add(i)
                ii = cp.get(i)
                if ii is not None:
                    interfaces.append(ii)
                    todo.extend(ii.interfaces)
        c = cp.get(c.super_name) if c.super_name else None
    implemented = set()
    for c in chain:
        implemented |= c.methods - c.abstract_methods
    for i in interfaces:
        implemented |= i.methods - i.abstract_methods
    missing = set()
    for t in chain + interfaces:
        if t.name.startswith(CHECKED_PREFIXES):
            missing |= {m for m in t.abstract_methods if m not in implemented}
    return sorted(f"{info.name.replace('/', '.')}: does not implement {name}{desc}" for name, desc in missing)


def unresolved(jar: Path, spark_jars: Path) -> list[str]:
    cp = ClassPath(spark_jars)
    own = set()
    all_refs = []
    own_infos = []
    with zipfile.ZipFile(jar) as z:
        for n in z.namelist():
            if n.endswith(".class"):
                info, refs = _parse(z.read(n))
                own.add(info.name)
                own_infos.append(info)
                all_refs.extend((info.name, r) for r in refs)
    # Our own classes are supertypes of others: look them up from the jar.
    for info in own_infos:
        cp.cache[info.name] = info
    missing = set()
    for user, (kind, owner, name, desc) in all_refs:
        owner = owner.lstrip("[").removeprefix("L").removesuffix(";")
        if owner in own or not owner.startswith(CHECKED_PREFIXES):
            continue
        if kind == "class":
            ok = cp.get(owner) is not None
        else:
            ok = cp.get(owner) is not None and cp.resolves("field" if kind == "field" else "method", owner, name, desc)
        if not ok:
            missing.add(f"{user.replace('/', '.')}: {kind} {owner.replace('/', '.')}"
                        + (f".{name}{desc}" if name else ""))
    for info in own_infos:
        if info.concrete:
            missing.update(_unimplemented(cp, info))
    return sorted(missing)


def main(argv: list[str]) -> int:
    jar, spark_jars = Path(argv[1]), Path(argv[2])
    missing = unresolved(jar, spark_jars)
    for m in missing:
        print(m)
    print(f"{len(missing)} unresolved references of {jar.name} in {spark_jars}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
