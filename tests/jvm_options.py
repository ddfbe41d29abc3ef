"""The JVM options of the Spark drivers the test suites start themselves (the session of each
pytest worker, the Connect suite's local server). ``BLOOMINDEX_TEST_JAVA_OPTIONS`` replaces them.

- ``-XX:+UseSerialGC``: on 2 cores shared by two workers' JVMs, G1's concurrent threads cost
  more than they save on a 2 GB heap (docs/decisions.md, "CI time, again").
- The C2 compiler's thresholds at four times the JDK's: a test suite runs thousands of short
  queries, each through a wide spread of Spark's code, and in one module's recording C2 spent
  75 s compiling in a 259 s run (the module costs 335 to 375 CPU-seconds unrecorded); at four times the
  thresholds it compiles less, and the hot loops of the randomized suites still reach C2
  (docs/decisions.md, "CI time: the C2 compiler's thresholds in the test drivers").
- ``-Dbloomindex.warmup.files=256``: the warm-up's per-file part (``catalog.Warmup``) runs over 256
  made-up files instead of 65,536, three rounds of load and probes that cost a driver seconds of
  CPU at start, for the JIT's sake at a million files; the tests' tables have a few files. Its
  code still runs in every test driver; ``WarmupSuite`` tests what it answers.
"""

from __future__ import annotations

import os

DEFAULT = ("-XX:+UseSerialGC -XX:Tier4InvocationThreshold=20000 -XX:Tier4MinInvocationThreshold=2400 "
           "-XX:Tier4CompileThreshold=60000 -XX:Tier4BackEdgeThreshold=160000 -Dbloomindex.warmup.files=256")


def java_options() -> str:
    return os.environ.get("BLOOMINDEX_TEST_JAVA_OPTIONS", DEFAULT)
