"""tests/test_index_api.py on a Spark Connect session."""

from test_index_api import *  # noqa: F401,F403 - the same tests, this directory's `spark`
