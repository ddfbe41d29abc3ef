"""A moto S3 server on 127.0.0.1 and a `local[2]` session whose S3A client points at it.

These tests run in their own pytest process (`make test-s3`; tests/conftest.py leaves this
folder out of the main collection): the session needs hadoop-aws and the AWS SDK on its class
path. See s3_helpers.py.
"""

from __future__ import annotations

import pytest

from object_store_session import index_root, object_store_session
from s3_helpers import BUCKET, TEST_JAR, MotoServer, s3_jars, s3a_conf


@pytest.fixture(scope="session")
def moto(tmp_path_factory):
    server = MotoServer(tmp_path_factory.mktemp("moto"))
    server.client().create_bucket(Bucket=BUCKET)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def spark(moto, tmp_path_factory):
    yield from object_store_session("s3", TEST_JAR, s3_jars(), s3a_conf(moto.endpoint),
                                    tmp_path_factory.mktemp("warehouse"))


@pytest.fixture()
def s3_root(spark, moto):
    """A fresh index root and data folder on s3a:// for one test."""
    yield from index_root(spark, f"s3a://{BUCKET}")
