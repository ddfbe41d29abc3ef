"""tests/test_error_conditions.py on a Spark Connect session: the same conditions, SQLSTATEs
and bloomindex exception classes."""

from test_error_conditions import *  # noqa: F401,F403 - the same tests, this directory's `spark`
