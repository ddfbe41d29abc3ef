"""tests/test_python_args.py on a Spark Connect session: the same checks, exceptions and
messages, before any SQL is sent; and progress=True warns once that it has no effect here."""

import warnings

import pytest

from test_python_args import *  # noqa: F401,F403 - the same tests, this directory's `spark`


def test_progress_true_warns_once_on_connect(spark, monkeypatch):
    from bloomindex import BloomIndex, _connect

    monkeypatch.setattr(_connect, "_PROGRESS_WARNED", False)
    with pytest.warns(UserWarning, match=r"progress=True\) has no effect on a Spark Connect session"):
        BloomIndex(spark, progress=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        BloomIndex(spark, progress=True)  # once per process
        BloomIndex(spark)  # "auto": nothing to say
        BloomIndex(spark, progress=False)
