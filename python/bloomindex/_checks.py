"""The size limits of the filter designs and the argument checks they share.

Each check raises ``ValueError`` naming the argument, as the JVM's do.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Bit set sizes of the blocked designs (``sbbf``, ``sbbf-murmur3``): 32 B to 128 MiB.
MIN_BYTES = 32
MAX_BYTES = 128 * 1024 * 1024
#: The ``classic`` design's smallest bit set (one 64-bit word) and most hash functions.
CLASSIC_MIN_BYTES = 8
MAX_HASHES = 64


def _is_int(n: Any) -> bool:
    return not isinstance(n, bool) and isinstance(n, (int, np.integer))


def check_fpp(fpp: Any) -> None:
    if not (isinstance(fpp, (int, float)) and 0.0 < fpp < 1.0):
        raise ValueError(f"fpp: must be in (0, 1), got {fpp!r}")


def check_ndv(ndv: Any) -> None:
    if not _is_int(ndv) or ndv < 0:
        raise ValueError(f"ndv: must be an integer >= 0, got {ndv!r}")


def check_sbbf_bytes(num_bytes: Any) -> None:
    """``sbbf``: a multiple of 32 bytes (one block) from 32 B to 128 MiB."""
    if not _is_int(num_bytes) or not MIN_BYTES <= num_bytes <= MAX_BYTES or num_bytes % 32:
        raise ValueError(
            f"num_bytes: must be a multiple of 32 between {MIN_BYTES} and {MAX_BYTES}, got {num_bytes!r}")


def check_power_of_two_bytes(num_bytes: Any) -> None:
    """``sbbf-murmur3``: a power of two from 32 B to 128 MiB."""
    if not _is_int(num_bytes) or not MIN_BYTES <= num_bytes <= MAX_BYTES or num_bytes & (num_bytes - 1):
        raise ValueError(
            f"num_bytes: must be a power of two between {MIN_BYTES} and {MAX_BYTES}, got {num_bytes!r}")


def check_classic_bytes(num_bytes: Any) -> None:
    """``classic``: a multiple of 8 bytes (one word) from 8 B to 128 MiB."""
    if not _is_int(num_bytes) or not CLASSIC_MIN_BYTES <= num_bytes <= MAX_BYTES or num_bytes % 8:
        raise ValueError(
            f"num_bytes: must be a multiple of 8 between {CLASSIC_MIN_BYTES} and {MAX_BYTES}, got {num_bytes!r}")


def check_num_hashes(num_hashes: Any) -> None:
    if not _is_int(num_hashes) or not 1 <= num_hashes <= MAX_HASHES:
        raise ValueError(f"num_hashes: must be between 1 and {MAX_HASHES}, got {num_hashes!r}")
