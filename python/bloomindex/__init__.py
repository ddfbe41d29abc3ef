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
"""

from .errors import BloomIndexError, ConcurrentBloomIndexUpdateError
from .filters import ALGORITHMS, ClassicBloomFilter, SbbfMurmur3, expected_fpp
from .hashing import hash_value, hash_values
from .index import BloomIndex, might_contain
from ._version import __version__
from .sbbf import Sbbf, optimal_num_bytes
from .session import configure, jar_paths

__all__ = ["ALGORITHMS", "BloomIndex", "BloomIndexError", "ClassicBloomFilter", "ConcurrentBloomIndexUpdateError",
           "Sbbf", "SbbfMurmur3", "configure", "expected_fpp", "hash_value", "hash_values", "jar_paths", "might_contain",
           "optimal_num_bytes"]
