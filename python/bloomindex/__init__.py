"""bloomindex: Bloom filter indexes for Apache Spark.

The filters are Parquet's split block Bloom filters, bit for bit, on the JVM and here (and two
other designs, :mod:`bloomindex.filters`):

>>> import bloomindex
>>> f = bloomindex.Sbbf.for_ndv(1000, 0.01)
>>> f.insert([1, 2, 3], "bigint")
>>> f.might_contain(2, "bigint")
True

A SparkSession gets the JVM side with :func:`configure`::

    spark = bloomindex.configure(SparkSession.builder.master("local[2]")).getOrCreate()

A Spark Connect session works the same (the wheel with its ``connect`` extra on a client
without a JVM; the server needs the jar and the extension, see :func:`configure`)::

    spark = SparkSession.builder.remote("sc://host:15002").getOrCreate()
    bloomindex.BloomIndex(spark).create("events_id", "events", ["id"])
"""

try:
    import pyspark.errors  # noqa: F401 - the full PySpark or the Spark Connect client
except ImportError as _e:  # pragma: no cover - an install without either
    raise ImportError("bloomindex needs PySpark: install the bloomindex wheel with its [spark] extra (the full "
                      "PySpark) or its [connect] extra (pyspark-client, for a Spark Connect server)") from _e

from .errors import BloomIndexError, ConcurrentBloomIndexUpdateError
from .filters import ALGORITHMS, ClassicBloomFilter, SbbfMurmur3, expected_fpp
from .hashing import hash_value, hash_values
from .index import BloomIndex, might_contain, ngrams, tokens
from ._version import __version__
from .sbbf import Sbbf, optimal_num_bytes
from .session import configure, jar_paths

__all__ = ["ALGORITHMS", "BloomIndex", "BloomIndexError", "ClassicBloomFilter", "ConcurrentBloomIndexUpdateError",
           "Sbbf", "SbbfMurmur3", "configure", "expected_fpp", "hash_value", "hash_values", "jar_paths",
           "might_contain", "ngrams", "optimal_num_bytes", "tokens"]
