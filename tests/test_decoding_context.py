"""Randomized: an index built under one decoding context and queried under others answers every
query as the scan would without it, and still prunes where the context is unchanged.

A decoding context is everything besides a file's bytes that decides the values a scan reads:
the session time zone, spark.sql.caseSensitive, the datetime parser policy and the CSV/JSON
datetime fallback switches, Parquet's rebase and INT96 settings, JSON's string settings, the
reader options (timestampFormat, dateFormat, nullValue, parse mode, ...), the schema (given or
inferred) and V1 or V2 file scans. Each build picks a format (CSV, JSON, Parquet, ORC), a kind
of source (a path read through a DataFrame with reader options, or a catalog table with
OPTIONS) and a context, builds an index, then runs random queries under the same context, under
contexts that differ only where decoding cannot change, and under random other contexts;
every query is run with pruning on and off and the answers must be equal.

Where a column's context is unchanged a point lookup of a value held by one file must skip files
(counted per format: a fix that simply stops pruning fails here); where it certainly changed,
BloomIndex.explain must say the index was not applied and why.

BLOOMINDEX_CONTEXT_CASES (default 300) sets the number of query cases; BLOOMINDEX_CONTEXT_SEED
the random seed."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import math
import os
import random
import re

import pytest
from pyspark.sql import types as T

from bloomindex import BloomIndex
from index_helpers import confs

N_CASES = int(os.environ.get("BLOOMINDEX_CONTEXT_CASES", "300"))
SEED = int(os.environ.get("BLOOMINDEX_CONTEXT_SEED", "20261123"))
N_BUILDS = max(12, min(64, N_CASES // 25))
PREDICATES_PER_CONTEXT = 5
CONTEXTS_PER_BUILD = max(3, math.ceil(N_CASES / N_BUILDS / PREDICATES_PER_CONTEXT))

FILES = 4
ROWS = 12
FORMATS = ["csv", "json", "parquet", "orc"]
TEXT = {"csv", "json"}

PRUNING = "spark.bloomindex.pruning.enabled"
V1_LIST = "spark.sql.sources.useV1SourceList"
TZ = "spark.sql.session.timeZone"
CASE = "spark.sql.caseSensitive"
POLICY = "spark.sql.legacy.timeParserPolicy"
CSV_FALLBACK = "spark.sql.legacy.csv.enableDateTimeParsingFallback"
JSON_FALLBACK = "spark.sql.legacy.json.enableDateTimeParsingFallback"
REBASE = "spark.sql.parquet.datetimeRebaseModeInRead"
INT96_REBASE = "spark.sql.parquet.int96RebaseModeInRead"
INT96_CONV = "spark.sql.parquet.int96TimestampConversion"
JSON_EXACT = "spark.sql.json.enableExactStringParsing"
JSON_EMPTY = "spark.sql.legacy.json.allowEmptyString.enabled"

# The session settings varied, with the values they may take (None: not set).
SESSION_DIMS = {
    TZ: ["UTC", "America/Los_Angeles", "Asia/Kolkata", "Europe/Amsterdam"],
    CASE: [None, "false", "true"],
    POLICY: [None, "CORRECTED", "LEGACY", "EXCEPTION"],
    CSV_FALLBACK: [None, "false", "true"],
    JSON_FALLBACK: [None, "false", "true"],
    REBASE: [None, "CORRECTED", "LEGACY"],
    INT96_REBASE: [None, "LEGACY"],
    INT96_CONV: [None, "true"],
    JSON_EXACT: [None, "false"],
    JSON_EMPTY: [None, "true"],
}
# The settings that may change each format's values (a random change picks among them mostly).
RELEVANT_SETTINGS = {"csv": [TZ, POLICY, CSV_FALLBACK], "json": [TZ, CASE, POLICY, JSON_FALLBACK, JSON_EXACT, JSON_EMPTY],
                     "parquet": [TZ, CASE, REBASE, INT96_REBASE, INT96_CONV], "orc": [TZ, CASE]}
# Spark's defaults of those that have one: "not set" and the default decode the same.
DEFAULTS = {TZ: "UTC", CASE: "false", POLICY: "CORRECTED", REBASE: "CORRECTED", INT96_REBASE: "CORRECTED",
            INT96_CONV: "false", JSON_EXACT: "true", JSON_EMPTY: "false"}
# Settings of one format only (for the others a change must not stop pruning).
FORMAT_OF_SETTING = {CSV_FALLBACK: {"csv"}, JSON_FALLBACK: {"json"}, REBASE: {"parquet"}, INT96_REBASE: {"parquet"},
                     INT96_CONV: {"parquet"}, JSON_EXACT: {"json"}, JSON_EMPTY: {"json"}, POLICY: TEXT}

# Reader options varied per format (absent, or one of these values).
OPTION_DIMS = {
    "csv": {"timestampFormat": ["yyyy/MM/dd HH:mm", "yyyy-MM-dd HH:mm:ss"],
            "dateFormat": ["dd/MM/yyyy", "yyyy/MM/dd", "yyyy-M-d"],
            "nullValue": ["NA"],
            "enableDateTimeParsingFallback": ["true", "false"],
            "mode": ["PERMISSIVE", "DROPMALFORMED", "FAILFAST"]},
    "json": {"timestampFormat": ["yyyy/MM/dd HH:mm", "yyyy-MM-dd HH:mm:ss"],
             "dateFormat": ["dd/MM/yyyy", "yyyy/MM/dd"],
             "allowNumericLeadingZeros": ["true"],
             "enableDateTimeParsingFallback": ["true", "false"],
             "mode": ["PERMISSIVE", "DROPMALFORMED", "FAILFAST"]},
    "parquet": {"datetimeRebaseMode": ["LEGACY", "CORRECTED"], "int96RebaseMode": ["LEGACY"]},
    "orc": {},
}

ROLES = ["id", "s", "d", "ts"]
ROLE_TYPE = {"id": "int", "s": "string", "d": "date", "ts": "timestamp"}
SCHEMA_DDL = "id INT, s STRING, d DATE, ts TIMESTAMP"
# Column names of the files (Parquet and ORC write `S`: a case-insensitive read of `s` finds it).
FILE_NAMES = {"csv": {r: r for r in ROLES}, "json": {r: r for r in ROLES},
              "parquet": {"id": "id", "s": "S", "d": "d", "ts": "ts"},
              "orc": {"id": "id", "s": "S", "d": "d", "ts": "ts"}}


# ---------------------------------------------------------------------------------------------
# data: FILES files of ROWS rows per format; ids unique, a file holds ids [f * ROWS, (f + 1) * ROWS)


BASE_DAY = dt.date(2021, 1, 1)
BASE_TS = dt.datetime(2021, 3, 1)


NULL_FILES = 2  # only the first files hold nulls as every context reads them: a context that reads
               # nulls elsewhere shows in null counts


def _text_fields(i: int) -> tuple[str, str, str, str]:
    """id, s, d, ts of row i as text, in forms that decode differently by context."""
    day = BASE_DAY + dt.timedelta(days=3 * i)
    t = BASE_TS + dt.timedelta(hours=5 * i, minutes=i)
    d = [day.isoformat(),                           # every context
         f"{day.year}-{day.month}-{day.day}",       # fallback parser, LEGACY, or dateFormat yyyy-M-d
         day.strftime("%d/%m/%Y"),                  # dateFormat dd/MM/yyyy
         day.isoformat(),
         "NA",                                      # null with nullValue NA
         "",                                        # null (CSV), empty string (JSON)
         "oops",                                    # malformed
         day.isoformat() + "T10:00:00",             # a date with a time: fallback / LEGACY only
         day.strftime("%Y/%m/%d")][(i * 5) % 9]     # dateFormat yyyy/MM/dd
    ts = [t.strftime("%Y-%m-%d %H:%M:%S"),          # no offset: read in the session zone
          t.strftime("%Y-%m-%dT%H:%M:%SZ"),
          t.strftime("%Y-%m-%dT%H:%M:%S+05:30"),
          t.strftime("%Y/%m/%d %H:%M"),             # timestampFormat yyyy/MM/dd HH:mm
          t.strftime("%Y-%m-%d %H:%M:%S"),
          "NA", "oops", "",
          t.strftime("%Y-%m-%dT%H:%M:%S")][(i * 7) % 9]
    s = "NA" if i % 9 == 4 else ("" if i % 13 == 6 else f"s{i}")
    if i >= NULL_FILES * ROWS:
        d = day.isoformat() if d in ("NA", "", "oops") else d
        ts = t.strftime("%Y-%m-%d %H:%M:%S") if ts in ("NA", "", "oops") else ts
        s = f"s{i}" if s == "" else s
    return str(i), s, d, ts


def _csv_line(i: int) -> str:
    return ",".join(_text_fields(i))


def _json_line(i: int) -> str:
    ident, s, d, ts = _text_fields(i)
    parts = [f'"id": {"0" + ident if i == 29 else ident}']     # a leading zero: malformed unless allowed
    s_key = "S" if (i // ROWS) % 2 else "s"                      # odd files spell the key `S`
    if i % 10 == 7:
        parts.append(f'"{s_key}": 1.50')                          # a number read as a string
    elif s != "" or i % 2:
        parts.append(f'"{s_key}": {json.dumps(s)}')
    for key, v in (("d", d), ("ts", ts)):
        if v == "" and i % 2 == 0:
            continue                                              # missing key
        parts.append(f'"{key}": {json.dumps(v) if v != "NA" else "null"}')
    return "{" + ", ".join(parts) + "}"


def _write_text(path: str, line, ext: str) -> None:
    os.makedirs(path)
    for f in range(FILES):
        with open(os.path.join(path, f"part-{f}.{ext}"), "w") as out:
            out.write("".join(line(i) + "\n" for i in range(f * ROWS, (f + 1) * ROWS)))


def _binary_values(i: int, ancient: bool):
    day = BASE_DAY + dt.timedelta(days=3 * i)
    t = dt.datetime(2021, 3, 1, tzinfo=dt.timezone.utc) + dt.timedelta(hours=5 * i, minutes=i)
    if ancient and i % 4 == 1:
        day = dt.date(1500, 3, 1) + dt.timedelta(days=3 * i)
    if ancient and i % 4 == 3:
        t = dt.datetime(1500, 3, 1, 12, tzinfo=dt.timezone.utc) + dt.timedelta(hours=5 * i)
    nulls = i < NULL_FILES * ROWS
    return (i, None if nulls and i % 11 == 3 else f"s{i}", None if nulls and i % 10 == 5 else day,
            None if nulls and i % 10 == 8 else t)


def _write_parquet(path: str) -> None:
    """pyarrow's files carry no Spark metadata: Spark reads their ancient dates and timestamps
    with the session's rebase modes; files 2 and 3 store timestamps as INT96."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    os.makedirs(path)
    for f in range(FILES):
        rows = [_binary_values(i, ancient=True) for i in range(f * ROWS, (f + 1) * ROWS)]
        table = pa.table({"id": pa.array([r[0] for r in rows], pa.int32()),
                          "S": pa.array([r[1] for r in rows], pa.string()),
                          "d": pa.array([r[2] for r in rows], pa.date32()),
                          "ts": pa.array([r[3] for r in rows], pa.timestamp("us", tz="UTC"))})
        pq.write_table(table, os.path.join(path, f"part-{f}.parquet"), use_deprecated_int96_timestamps=f >= 2)


def _write_orc(spark, path: str) -> None:
    schema = T.StructType([T.StructField("id", T.IntegerType()), T.StructField("S", T.StringType()),
                           T.StructField("d", T.DateType()), T.StructField("ts", T.TimestampType())])
    for f in range(FILES):
        rows = [_binary_values(i, ancient=False) for i in range(f * ROWS, (f + 1) * ROWS)]
        spark.createDataFrame(rows, schema).coalesce(1).write.mode("append").orc(path)


@pytest.fixture(scope="module")
def datasets(spark, tmp_path_factory):
    # Queries that fail (FAILFAST, EXCEPTION) are expected here: keep the executors' logs quiet.
    spark.sparkContext.setLogLevel("FATAL")
    base = tmp_path_factory.mktemp("decoding_context")
    paths = {fmt: str(base / fmt) for fmt in FORMATS}
    _write_text(paths["csv"], _csv_line, "csv")
    _write_text(paths["json"], _json_line, "json")
    _write_parquet(paths["parquet"])
    _write_orc(spark, paths["orc"])
    yield paths
    spark.sparkContext.setLogLevel("ERROR")  # as conftest leaves it


# ---------------------------------------------------------------------------------------------
# contexts


@dataclasses.dataclass
class Ctx:
    fmt: str
    kind: str                       # "path" (a DataFrame with reader options) or "table"
    schema: str                     # "user" (SCHEMA_DDL) or "inferred" (Parquet/ORC paths only)
    options: dict
    confs: dict                     # every SESSION_DIMS key: value or None
    v2: bool = False

    def names(self) -> dict:
        """Column of each role as this context's schema spells it."""
        return dict(FILE_NAMES[self.fmt]) if self.schema == "inferred" else {r: r for r in ROLES}

    def effective(self, key: str):
        v = self.confs.get(key)
        return (v if v is not None else DEFAULTS.get(key))

    def value_options(self) -> dict:
        """The options that may change values: keys lower-cased, the parse mode of text left out."""
        return {k.lower(): v for k, v in self.options.items() if not (self.fmt in TEXT and k.lower() == "mode")}

    def parse_errors_possible(self) -> bool:
        mode = {k.lower(): v for k, v in self.options.items()}.get("mode", "PERMISSIVE")
        return mode == "FAILFAST" or self.effective(POLICY) == "EXCEPTION"

    def describe(self) -> str:
        confs = {k.replace("spark.sql.", ""): v for k, v in self.confs.items() if v is not None}
        return f"{self.fmt} {self.kind}{' V2' if self.v2 else ''} schema={self.schema} options={self.options} confs={confs}"


def _option_applies(key: str, role: str) -> bool:
    if key == "timestampformat":
        return role == "ts"
    if key == "dateformat":
        return role in ("d", "ts")
    return True


def _setting_relevant(fmt: str, role: str, key: str, b: Ctx, q: Ctx) -> bool:
    """Whether a change of `key` may change how `fmt` decodes a `role` column (conservative)."""
    datetime_role = role in ("d", "ts")
    if key == TZ:
        if fmt in TEXT:
            return role == "ts"
        if fmt == "parquet":  # Spark converts Parquet timestamps in the session zone only for these
            legacy = any(c.effective(k) in ("LEGACY", "true") for c in (b, q) for k in (REBASE, INT96_REBASE, INT96_CONV))
            legacy_opt = any(v.upper() == "LEGACY" for c in (b, q) for v in c.value_options().values())
            return role == "ts" and (legacy or legacy_opt)
        return False
    if key == CASE:
        return fmt != "csv"  # CSV maps columns by position
    if key in FORMAT_OF_SETTING and fmt not in FORMAT_OF_SETTING[key]:
        return False
    if key in (POLICY, CSV_FALLBACK, JSON_FALLBACK, REBASE):
        return datetime_role
    if key in (INT96_REBASE, INT96_CONV):
        return role == "ts"
    return True  # JSON's string settings, and anything else: may matter


def _setting_certain(fmt: str, role: str, key: str) -> bool:
    """Whether the brief says a change of `key` is recorded for `fmt`/`role` (so the column must
    not be used for pruning)."""
    if key == TZ:
        return fmt in TEXT and role == "ts"
    if key == CASE:
        return fmt != "csv"
    if key == POLICY:
        return fmt in TEXT and role in ("d", "ts")
    if key == CSV_FALLBACK:
        return fmt == "csv" and role in ("d", "ts")
    if key == JSON_FALLBACK:
        return fmt == "json" and role in ("d", "ts")
    if key == REBASE:
        return fmt == "parquet" and role in ("d", "ts")
    if key in (INT96_REBASE, INT96_CONV):
        return fmt == "parquet" and role == "ts"
    return False


def column_changes(role: str, b: Ctx, q: Ctx) -> tuple[list[str], list[str]]:
    """(changes that may alter how `role` decodes, changes the brief says must stop its use)."""
    may, certain = [], []
    if b.schema != q.schema:
        may.append("schema")
    bo, qo = b.value_options(), q.value_options()
    for k in sorted(set(bo) | set(qo)):
        if bo.get(k) != qo.get(k):
            may.append(f"option {k}")
            if _option_applies(k, role):
                certain.append(f"option {k}")
    for k in SESSION_DIMS:
        if b.effective(k) != q.effective(k):
            if _setting_relevant(b.fmt, role, k, b, q):
                may.append(k)
            if _setting_certain(b.fmt, role, k):
                certain.append(k)
    return may, certain


def _other_value(rng: random.Random, key: str, current):
    v = rng.choice([v for v in SESSION_DIMS[key] if v != current])
    if v == "EXCEPTION" and rng.random() < 0.6:
        v = "LEGACY" if current != "LEGACY" else None  # rarer: many queries under it fail both ways
    return v


def _random_confs(rng: random.Random, fmt: str) -> dict:
    confs = {k: None for k in SESSION_DIMS}
    confs[TZ] = rng.choice(SESSION_DIMS[TZ])
    for k in SESSION_DIMS:
        if k != TZ and rng.random() < (0.4 if k in RELEVANT_SETTINGS[fmt] else 0.1):
            confs[k] = _other_value(rng, k, None)
    return confs


def _random_options(rng: random.Random, fmt: str, p: float = 0.35) -> dict:
    out = {}
    for k, values in OPTION_DIMS[fmt].items():
        if rng.random() < p:
            out[k] = rng.choice(values)
    return out


def build_context(i: int) -> Ctx:
    rng = random.Random(SEED * 1000 + i)
    fmt = FORMATS[i % len(FORMATS)]
    kind = "table" if (i // len(FORMATS)) % 3 == 1 else "path"
    schema = "inferred" if kind == "path" and fmt in ("parquet", "orc") and rng.random() < 0.35 else "user"
    return Ctx(fmt, kind, schema, _random_options(rng, fmt), _random_confs(rng, fmt))


def _vary_key_case(rng: random.Random, options: dict) -> dict:
    return {(k.lower() if rng.random() < 0.5 else k.upper()) if rng.random() < 0.5 else k: v for k, v in options.items()}


def query_context(rng: random.Random, b: Ctx, n: int) -> tuple[str, Ctx]:
    """The n-th query context of build `b`: 0 the same, 1 changed only where decoding cannot
    change (V2, parse mode, key case, another format's settings, defaults set explicitly, the
    zone of Parquet/ORC, case sensitivity of CSV), then random."""
    q = dataclasses.replace(b, options=dict(b.options), confs=dict(b.confs), v2=False)
    path = b.kind == "path"
    if n == 0:
        if path:
            q.v2 = rng.random() < 0.3
            q.options = _vary_key_case(rng, q.options)
        return "same", q
    if n == 1:
        moves = ["explicit-default", "other-format-setting"]
        if path:
            moves += ["v2", "key-case"] + (["mode"] if b.fmt in TEXT else [])
        if b.fmt == "csv":
            moves.append("case")
        if b.fmt == "orc" or (b.fmt == "parquet" and not _setting_relevant("parquet", "ts", TZ, b, b)):
            moves.append("zone")
        for move in rng.sample(moves, k=min(len(moves), rng.choice([1, 2, 3]))):
            if move == "v2":
                q.v2 = True
            elif move == "key-case":
                q.options = _vary_key_case(rng, q.options)
            elif move == "mode":
                q.options = {k: v for k, v in q.options.items() if k.lower() != "mode"}
                q.options["mode"] = rng.choice(OPTION_DIMS[b.fmt]["mode"])
            elif move == "case":
                q.confs[CASE] = "true" if q.effective(CASE) == "false" else "false"
            elif move == "zone":
                q.confs[TZ] = rng.choice([z for z in SESSION_DIMS[TZ] if z != q.confs[TZ]])
            elif move == "explicit-default":
                unset = [k for k in DEFAULTS if q.confs.get(k) is None and k != TZ]
                if unset:
                    k = rng.choice(unset)
                    q.confs[k] = DEFAULTS[k]
            elif move == "other-format-setting":
                others = [k for k, fmts in FORMAT_OF_SETTING.items() if b.fmt not in fmts]
                k = rng.choice(others)
                q.confs[k] = rng.choice([v for v in SESSION_DIMS[k] if v != q.confs[k]])
        return "neutral", q
    # Random: one to three dimensions changed, mostly ones that matter for the format.
    for _ in range(rng.choice([1, 1, 2, 3])):
        dim = rng.random()
        if dim < 0.5:
            k = rng.choice(RELEVANT_SETTINGS[b.fmt] if rng.random() < 0.8 else list(SESSION_DIMS))
            q.confs[k] = _other_value(rng, k, q.confs[k])
        elif dim < 0.85 and path and OPTION_DIMS[b.fmt]:
            k = rng.choice(list(OPTION_DIMS[b.fmt]) + (["mode"] if b.fmt in TEXT else []))
            present = [o for o in q.options if o.lower() == k.lower()]
            for o in present:
                del q.options[o]
            if not present or rng.random() < 0.5:
                q.options[k] = rng.choice(OPTION_DIMS[b.fmt][k])
        elif path and b.fmt in ("parquet", "orc") and rng.random() < 0.5:
            q.schema = "user" if q.schema == "inferred" else "inferred"
        else:
            q.confs[TZ] = rng.choice([z for z in SESSION_DIMS[TZ] if z != q.confs[TZ]])
    if path and b.fmt in TEXT and rng.random() < 0.2:
        q.options = {k: v for k, v in q.options.items() if k.lower() != "mode"}
        q.options["mode"] = "FAILFAST"
    if path:
        q.v2 = rng.random() < 0.3
    return "random", q


def in_context(spark, ctx: Ctx, pruning: bool = True):
    settings = dict(ctx.confs)
    settings[V1_LIST] = "" if ctx.v2 else None
    settings[PRUNING] = "true" if pruning else "false"
    return confs(spark, settings)


# ---------------------------------------------------------------------------------------------
# sources and values


def table_name(i: int) -> str:
    return f"dctx_t{i}"


def reader(spark, ds: dict, ctx: Ctx, table: str | None, permissive: bool = False):
    """A function making the DataFrame of the source as `ctx` reads it (call it inside the context:
    V1 or V2 is decided when the DataFrame is made). `permissive`: the same source read as a path
    in PERMISSIVE mode (a table's options too), for collecting values."""
    if ctx.kind == "table" and not permissive:
        return lambda: spark.table(table)
    options = {k: v for k, v in ctx.options.items() if not (permissive and k.lower() == "mode")}

    def make():
        r = spark.read.format(ctx.fmt).options(**options)
        if ctx.schema == "user":
            r = r.schema(SCHEMA_DDL)
        return r.load(ds[ctx.fmt])
    return make


def literal(role: str, v) -> str:
    if role == "id":
        return str(v)
    if role == "s":
        return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if role == "d":
        return f"date_from_unix_date({v})"
    return f"timestamp_micros({v})"


ABSENT = {"id": [9999, -1], "s": ["s_absent", "NA"], "d": [0, 18000], "ts": [0, 1000000000000000]}


@dataclasses.dataclass
class Decoded:
    values: dict    # role -> {value: files holding it}
    nulls: dict     # role -> files holding a null


def decoded_values(spark, ds: dict, ctx: Ctx, table: str | None) -> Decoded:
    """The values and nulls of each file as `ctx` decodes the source (PERMISSIVE, pruning off)."""
    names = ctx.names()
    exprs = {"id": names["id"], "s": names["s"], "d": f"unix_date(`{names['d']}`)", "ts": f"unix_micros(`{names['ts']}`)"}
    probe = dataclasses.replace(ctx, kind="path", v2=False)
    make = reader(spark, ds, probe, table, permissive=True)
    out = Decoded({r: {} for r in ROLES}, {r: set() for r in ROLES})
    with in_context(spark, probe, pruning=False):
        try:
            rows = make().selectExpr("input_file_name() AS f", *[f"{exprs[r]} AS {r}" for r in ROLES]).collect()
            per_role = {r: [(row.f, row[r]) for row in rows] for r in ROLES}
        except Exception:  # a column the context cannot read (EXCEPTION policy): the others alone
            per_role = {}
            for r in ROLES:
                try:
                    per_role[r] = [(row.f, row[1]) for row in
                                   make().selectExpr("input_file_name() AS f", f"{exprs[r]} AS v").collect()]
                except Exception:
                    per_role[r] = []
    for r, pairs in per_role.items():
        for f, v in pairs:
            if v is None:
                out.nulls[r].add(f)
            else:
                out.values[r].setdefault(v, set()).add(f)
    return out


def would_be_wrong(spec, indexed: list[str], built: Decoded, now: Decoded) -> bool:
    """Whether an index used whatever the context (filters as built, probed with the query's
    values) would skip a file that holds a match as the query decodes it: the cases that catch a
    missing context check. Top-level single-column predicates only (an estimate)."""
    if spec is None or spec[1] not in indexed:
        return False
    kind, role, values = spec
    if kind == "in":
        return any(now.values[role].get(v, set()) - built.values[role].get(v, set()) for v in values)
    if kind == "null":
        return bool(now.nulls[role] - built.nulls[role])
    if kind == "notnull":
        has = lambda d: set().union(*d.values[role].values()) if d.values[role] else set()
        return bool(has(now) - has(built))
    return False


# ---------------------------------------------------------------------------------------------
# queries


def random_predicate(rng: random.Random, names: dict, pools: dict, prefer: list[str],
                     depth: int = 0) -> tuple[str, tuple | None]:
    """A predicate, and for a single-column one (kind, role, values) (see would_be_wrong);
    mostly on the `prefer` columns."""
    if depth < 1 and rng.random() < 0.2:
        op = rng.choice(["AND", "OR"])
        return (f"({random_predicate(rng, names, pools, prefer, 1)[0]} {op} "
                f"{random_predicate(rng, names, pools, prefer, 1)[0]})"), None
    role = rng.choice(prefer if prefer and rng.random() < 0.8 else ROLES)
    col = f"`{names[role]}`"

    def value():
        # Mostly values that the two contexts decode differently.
        p, x = pools[role], rng.random()
        if p["now"] and x < 0.6:
            return rng.choice(p["now"])
        if p["built"] and x < 0.72:
            return rng.choice(p["built"])
        return rng.choice(p["all"]) if p["all"] and x < 0.92 else rng.choice(ABSENT[role])
    kind = rng.random()
    if kind < 0.45:
        v = value()
        return f"{col} = {literal(role, v)}", ("in", role, [v])
    if kind < 0.65:
        vs = [value() for _ in range(rng.choice([2, 3, 5]))]
        return f"{col} IN ({', '.join(literal(role, v) for v in vs)})", ("in", role, vs)
    if kind < 0.75:
        v = value()
        return f"{col} <=> {literal(role, v)}", ("in", role, [v])
    if kind < 0.87:
        return f"{col} IS NULL", ("null", role, [])
    return f"{col} IS NOT NULL", ("notnull", role, [])


def projection(rng: random.Random, names: dict) -> list[str]:
    x = rng.random()
    if x < 0.5:
        return [f"`{names['id']}` AS id", f"`{names['s']}` AS s", f"unix_date(`{names['d']}`) AS d",
                f"unix_micros(`{names['ts']}`) AS ts"]
    if x < 0.85:
        return [f"`{names['id']}` AS id"]
    return ["count(*) AS n"]


def _sort_key(row: tuple):
    return tuple((v is None, v if v is not None else 0) for v in row)


def outcome(spark, ctx: Ctx, make, where: str, cols: list[str], pruning: bool):
    with in_context(spark, ctx, pruning):
        try:
            return ("rows", sorted((tuple(r) for r in make().where(where).selectExpr(*cols).collect()), key=_sort_key))
        except Exception as e:  # a parse error of FAILFAST / EXCEPTION, or anything else
            return ("error", type(e).__name__ + ": " + str(e).split("\n")[0][:200])


def explain(spark, ctx: Ctx, make, where: str) -> str:
    with in_context(spark, ctx, pruning=True):
        return BloomIndex(spark).explain(make().where(where))


def lookup(spark, ctx: Ctx, make, where: str, index: str):
    """(files kept, files) by `index` per the planned scan (None: not pruned by it), and
    BloomIndex.explain's report of the same query."""
    with in_context(spark, ctx, pruning=True):
        df = make().where(where)
        plan = df._jdf.queryExecution().executedPlan().toString()
        text = BloomIndex(spark).explain(make().where(where))
    m = re.search(rf"BloomIndexPruned \[index={re.escape(index)}, version=\d+, files kept (\d+) of (\d+)\]", plan)
    return ((int(m.group(1)), int(m.group(2))) if m else None), text


def kept(text: str, index: str):
    m = re.search(rf"index {re.escape(index)} \(log version \d+\) kept (\d+)/(\d+) files", text)
    return (int(m.group(1)), int(m.group(2))) if m else None


STATS = {"cases": 0, "traps": 0, "contexts": 0, "builds": 0, "off_only_errors": 0, "both_errors": 0,
         "not_applied_checks": 0,
         "same_lookups": {f: [0, 0] for f in FORMATS},          # [pruned, checked], context identical
         "unchanged_lookups": {f: [0, 0] for f in FORMATS}}     # [pruned, checked], column context unchanged


@pytest.mark.parametrize("build", range(N_BUILDS))
def test_index_under_another_decoding_context(spark, root, datasets, build):
    b = build_context(build)
    rng = random.Random(SEED * 7919 + build)
    name = f"dctx_{build}"
    table = table_name(build) if b.kind == "table" else None
    indexed = ["id"] + [r for r in ("s", "d", "ts") if rng.random() < 0.85]
    if table:
        spark.sql(f"DROP TABLE IF EXISTS {table}")
        opts = ", ".join(f"'{k}' '{v}'" for k, v in b.options.items())
        spark.sql(f"CREATE TABLE {table} ({SCHEMA_DDL}) USING {b.fmt} "
                  f"{'OPTIONS (' + opts + ')' if opts else ''} LOCATION '{datasets[b.fmt]}'")
    mismatches, same_lookups, unchanged_lookups, not_pruned = [], [0, 0], [0, 0], []
    try:
        names = b.names()
        # Column names as CREATE may spell them: any case, where the session resolves case-insensitively.
        spelled = [names[r] if b.effective(CASE) == "true" else rng.choice([names[r], names[r].upper(), names[r].lower()])
                   for r in indexed]
        with in_context(spark, b):
            if table:
                spark.sql(f"CREATE BLOOM INDEX {name} ON {table} FOR COLUMNS ({', '.join(spelled)})")
            else:
                BloomIndex(spark, progress=False).create(name, reader(spark, datasets, b, None)(), spelled)
        built_values = decoded_values(spark, datasets, b, table)
        STATS["builds"] += 1
        for n in range(CONTEXTS_PER_BUILD):
            how, q = query_context(rng, b, n)
            STATS["contexts"] += 1
            qnames = q.names()
            now = decoded_values(spark, datasets, q, table)
            values = now.values
            pools = {r: {"all": sorted(set(values[r]) | set(built_values.values[r]), key=repr),
                         "now": sorted(set(values[r]) - set(built_values.values[r]), key=repr),
                         "built": sorted(set(built_values.values[r]) - set(values[r]), key=repr)} for r in ROLES}
            make = reader(spark, datasets, q, table)
            # Indexed columns the two contexts read differently (values or nulls, per file).
            prefer = [r for r in indexed if pools[r]["now"] or pools[r]["built"] or now.nulls[r] != built_values.nulls[r]]
            for _ in range(PREDICATES_PER_CONTEXT):
                where, spec = random_predicate(rng, qnames, pools, prefer)
                cols = projection(rng, qnames)
                on = outcome(spark, q, make, where, cols, True)
                off = outcome(spark, q, make, where, cols, False)
                STATS["cases"] += 1
                STATS["traps"] += would_be_wrong(spec, indexed, built_values, now)
                if on == off or (on[0] == off[0] == "error"):
                    STATS["both_errors"] += on[0] == "error"
                    continue
                if on[0] == "rows" and off[0] == "error" and q.parse_errors_possible():
                    STATS["off_only_errors"] += 1  # skipping a file skipped its parse error too
                    continue
                mismatches.append(f"built [{b.describe()}] on {indexed}, queried ({how}) [{q.describe()}]: "
                                  f"SELECT {', '.join(cols)} WHERE {where}: pruning on {on}, off {off}")
            # Pruning where the column's context is unchanged: a value held by one file.
            certain_changed = []
            for role in indexed:
                may, certain = column_changes(role, b, q)
                if certain:
                    certain_changed.append(role)
                if may:
                    continue
                single = [v for v, files in values[role].items() if len(files) == 1]
                if not single:
                    continue
                where = f"`{qnames[role]}` = {literal(role, rng.choice(sorted(single, key=repr)))}"
                k, text = lookup(spark, q, make, where, name)
                pruned = k is not None and k[0] < k[1]
                reported = kept(text, name)
                if pruned and reported != k:
                    mismatches.append(f"WHERE {where} under [{q.describe()}]: the plan kept {k[0]} of {k[1]} files, "
                                      f"BloomIndex.explain says:\n{text}")
                counter = same_lookups if how == "same" else unchanged_lookups
                counter[0] += pruned
                counter[1] += 1
                if not pruned:
                    not_pruned.append(f"{role} under ({how}) [{q.describe()}]: {text}")
                if how == "same" and not pruned:
                    mismatches.append(f"identical context did not prune {role}: [{q.describe()}]\n{text}")
            # Where the brief says the column's context changed: not used, and explain says why (V1 scans).
            if certain_changed and not q.v2:
                role = rng.choice(certain_changed)
                pool = pools[role]["all"] or ABSENT[role]
                text = explain(spark, q, make, f"`{qnames[role]}` = {literal(role, rng.choice(pool))}")
                STATS["not_applied_checks"] += 1
                k = kept(text, name)
                lines = [ln for ln in text.splitlines() if f"not applied: {name}:" in ln]
                if (k is not None and k[0] < k[1]) or not lines:
                    mismatches.append(f"{role} of [{b.describe()}] used under [{q.describe()}] "
                                      f"({column_changes(role, b, q)[1]}):\n{text}")
    finally:
        if table:
            spark.sql(f"DROP TABLE IF EXISTS {table}")
    for key, c in (("same_lookups", same_lookups), ("unchanged_lookups", unchanged_lookups)):
        STATS[key][b.fmt][0] += c[0]
        STATS[key][b.fmt][1] += c[1]
    assert not mismatches, f"{len(mismatches)} wrong:\n" + "\n\n".join(mismatches[:6])
    assert same_lookups[1] > 0, f"no point lookup in an identical context: [{b.describe()}] on {indexed}"
    if b.fmt in ("parquet", "orc"):
        assert unchanged_lookups[0] == unchanged_lookups[1], \
            f"{unchanged_lookups[1] - unchanged_lookups[0]} of {unchanged_lookups[1]} lookups on columns whose " \
            f"context is unchanged did not prune: [{b.describe()}]:\n" + "\n".join(not_pruned[:4])


def test_summary_pruning_where_the_context_is_unchanged():
    """Across the builds above (run in this module, in order): enough cases, and pruning where
    nothing that decodes a column changed, on every format."""
    if STATS["builds"] < N_BUILDS:
        pytest.skip(f"only {STATS['builds']} of {N_BUILDS} builds ran")
    print(f"\ndecoding context: {STATS['builds']} builds, {STATS['contexts']} query contexts, "
          f"{STATS['cases']} cases ({STATS['traps']} that an index used regardless of context would answer "
          f"wrong, {STATS['both_errors']} failing both ways, {STATS['off_only_errors']} failing only "
          f"with pruning off), {STATS['not_applied_checks']} not-applied checks; point lookups pruned "
          f"(identical context) {STATS['same_lookups']}, (column context unchanged) {STATS['unchanged_lookups']}")
    assert STATS["cases"] >= N_CASES
    # The suite keeps its teeth: many cases where an index used in the wrong context would be wrong.
    assert STATS["traps"] >= max(10, STATS["cases"] // 25), STATS["traps"]
    for fmt in FORMATS:
        pruned, checked = STATS["same_lookups"][fmt]
        assert checked >= 2 and pruned == checked, (fmt, STATS["same_lookups"])
        pruned, checked = STATS["unchanged_lookups"][fmt]
        if fmt in ("parquet", "orc"):
            assert checked >= 4 and pruned == checked, (fmt, STATS["unchanged_lookups"])
        else:
            assert checked >= 4 and pruned >= 0.8 * checked, (fmt, STATS["unchanged_lookups"])
