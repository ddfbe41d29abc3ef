"""The one build hook: a wheel (or a non-editable install) without the JVM jars fails.

Everything else is in pyproject.toml. ``make dist`` builds the jars first (``sbt stageJars``
copies them into ``bloomindex/jars/``); a wheel without them would install and then fail at
``bloomindex.configure()``, so the build stops here instead. Editable installs (``pip install
-e``, what ``make`` does before the jar exists) read the jars from the source folder at run
time and are not checked.
"""

import glob
import os

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
JARS = os.path.join(HERE, "bloomindex", "jars")


class BuildPyWithJars(build_py):
    def run(self):
        if not getattr(self, "editable_mode", False):
            missing = []
            if not os.path.isfile(os.path.join(JARS, "bloomindex.jar")):
                missing.append("bloomindex.jar")
            if not glob.glob(os.path.join(JARS, "zero-allocation-hashing-*.jar")):
                missing.append("zero-allocation-hashing-*.jar")
            if missing:
                raise SystemExit(
                    f"bloomindex: {', '.join(missing)} missing from {JARS}: build the jars first "
                    "(`make jar`, or `make dist` for the wheel)")
        super().run()


setup(cmdclass={"build_py": BuildPyWithJars})
