"""A fake-gcs-server on 127.0.0.1 and a `local[2]` session whose GCS connector points at it.

These tests run in their own pytest process (`make test-gcs`; tests/conftest.py leaves this
folder out of the main collection): the session needs the GCS connector on its class path.
See gcs_helpers.py.
"""

from __future__ import annotations

import pytest

from object_store_session import index_root, object_store_session
from gcs_helpers import BUCKET, TEST_JAR, FakeGcsServer, gcs_conf, gcs_jars


@pytest.fixture(scope="session")
def gcs(tmp_path_factory):
    server = FakeGcsServer(tmp_path_factory.mktemp("fake-gcs"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def spark(gcs, tmp_path_factory):
    yield from object_store_session("gcs", TEST_JAR, gcs_jars(), gcs_conf(gcs.endpoint),
                                    tmp_path_factory.mktemp("warehouse"))


@pytest.fixture()
def gs_root(spark, gcs):
    """A fresh index root and data folder on gs:// for one test."""
    yield from index_root(spark, f"gs://{BUCKET}")
