"""The latency proxy of tests and benches (latency_proxy.py): every request on a kept-alive
connection pays the delay, requests are counted by kind, and it binds 127.0.0.1 only."""

from __future__ import annotations

import time

import pytest

from latency_proxy import LatencyProxy, kind_of
from s3_helpers import ACCESS_KEY, BUCKET, SECRET_KEY


def client(endpoint):
    import boto3
    import botocore.config

    return boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id=ACCESS_KEY,
                        aws_secret_access_key=SECRET_KEY,
                        config=botocore.config.Config(max_pool_connections=4, retries={"max_attempts": 1}))


def test_kinds():
    assert kind_of("/b/t/indexes/i/data/op/column=k/_part-0.probe") == "probe"
    assert kind_of("/b/t/indexes/i/_log/00000000000000000001.json") == "log"
    assert kind_of("/b/t/indexes/i/data/op/_summary.json") == "summary"
    assert kind_of("/b/?list-type=2&prefix=t%2F") == "list"
    assert kind_of("/b/t/part-000001.parquet") == "source"
    assert kind_of("/b", "PUT") == "bucket"


def test_each_request_on_a_kept_alive_connection_pays_the_delay(moto):
    with LatencyProxy(moto.port, delay_ms=50, max_connections=4) as proxy:
        assert proxy.endpoint.startswith("http://127.0.0.1:")
        c = client(proxy.endpoint)
        key = "latency-proxy-test/x/indexes/i/data/op/column=k/_part-0.probe"
        c.put_object(Bucket=BUCKET, Key=key, Body=b"x" * 200_000)
        c.get_object(Bucket=BUCKET, Key=key, Range="bytes=0-9")["Body"].read()
        proxy.reset()
        t0 = time.perf_counter()
        for _ in range(10):
            assert c.get_object(Bucket=BUCKET, Key=key, Range="bytes=100-199")["Body"].read() == b"x" * 100
        took = time.perf_counter() - t0
        assert took >= 10 * 0.05, took  # one delay per request, not per connection
        assert proxy.counts() == {"GET probe": 10}
        assert proxy.requested_bytes() == {"probe": 1000}
        assert proxy.max_open <= 4
        # A body (PUT) passes whole, and the response's bytes are the object's.
        c.put_object(Bucket=BUCKET, Key="latency-proxy-test/big", Body=bytes(range(256)) * 4000)
        assert c.get_object(Bucket=BUCKET, Key="latency-proxy-test/big")["Body"].read() == bytes(range(256)) * 4000


def test_local_only(moto):
    with pytest.raises(ValueError):
        LatencyProxy(moto.port, upstream_host="example.org")
