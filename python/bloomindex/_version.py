"""The one place bloomindex's version is written: the wheel (pyproject.toml reads it), the JVM
artifacts (build.sbt reads it) and ``bloomindex.__version__``."""

__version__ = "0.1.0"
