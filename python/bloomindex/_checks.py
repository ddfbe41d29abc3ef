"""The size limits of the filter designs and the argument checks they share.

Each check names the argument and what it accepts: ``TypeError`` for a wrong type (a str for
a number, a bool for an int), ``ValueError`` for a wrong value of the right type (as the JVM's).
None loops over elements in Python: an array is checked by its dtype.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

#: Bit set sizes of the blocked designs (``sbbf``, ``sbbf-murmur3``): 32 B to 128 MiB.
MIN_BYTES = 32
MAX_BYTES = 128 * 1024 * 1024
#: The ``classic`` design's smallest bit set (one 64-bit word) and most hash functions.
CLASSIC_MIN_BYTES = 8
MAX_HASHES = 64


def _is_int(n: Any) -> bool:
    return not isinstance(n, (bool, np.bool_)) and isinstance(n, (int, np.integer))


def _type(value: Any) -> str:
    return type(value).__name__


def check_int_type(arg: str, value: Any, accepts: str = "an int") -> None:
    """``TypeError`` unless ``value`` is an int (``numpy`` integers too; not a bool)."""
    if not _is_int(value):
        raise TypeError(f"{arg}: must be {accepts}, got {_type(value)} {value!r}")


def check_fpp(fpp: Any) -> None:
    if isinstance(fpp, (bool, np.bool_)) or not isinstance(fpp, numbers.Real):
        raise TypeError(f"fpp: must be a number (float) in (0, 1), got {_type(fpp)} {fpp!r}")
    if not 0.0 < fpp < 1.0:
        raise ValueError(f"fpp: must be in (0, 1), got {fpp!r}")


def check_ndv(ndv: Any) -> None:
    check_int_type("ndv", ndv, "an int >= 0")
    if ndv < 0:
        raise ValueError(f"ndv: must be an integer >= 0, got {ndv!r}")


def check_power_of_two(power_of_two: Any) -> None:
    if not isinstance(power_of_two, (bool, np.bool_)):
        raise TypeError(f"power_of_two: must be True or False, got {_type(power_of_two)} {power_of_two!r}")


def check_sbbf_bytes(num_bytes: Any) -> None:
    """``sbbf``: a multiple of 32 bytes (one block) from 32 B to 128 MiB."""
    accepts = f"a multiple of 32 between {MIN_BYTES} and {MAX_BYTES}"
    check_int_type("num_bytes", num_bytes, f"an int, {accepts}")
    if not MIN_BYTES <= num_bytes <= MAX_BYTES or num_bytes % 32:
        raise ValueError(f"num_bytes: must be {accepts}, got {num_bytes!r}")


def check_power_of_two_bytes(num_bytes: Any) -> None:
    """``sbbf-murmur3``: a power of two from 32 B to 128 MiB."""
    accepts = f"a power of two between {MIN_BYTES} and {MAX_BYTES}"
    check_int_type("num_bytes", num_bytes, f"an int, {accepts}")
    if not MIN_BYTES <= num_bytes <= MAX_BYTES or num_bytes & (num_bytes - 1):
        raise ValueError(f"num_bytes: must be {accepts}, got {num_bytes!r}")


def check_classic_bytes(num_bytes: Any) -> None:
    """``classic``: a multiple of 8 bytes (one word) from 8 B to 128 MiB."""
    accepts = f"a multiple of 8 between {CLASSIC_MIN_BYTES} and {MAX_BYTES}"
    check_int_type("num_bytes", num_bytes, f"an int, {accepts}")
    if not CLASSIC_MIN_BYTES <= num_bytes <= MAX_BYTES or num_bytes % 8:
        raise ValueError(f"num_bytes: must be {accepts}, got {num_bytes!r}")


def check_num_hashes(num_hashes: Any) -> None:
    accepts = f"between 1 and {MAX_HASHES}"
    check_int_type("num_hashes", num_hashes, f"an int {accepts}")
    if not 1 <= num_hashes <= MAX_HASHES:
        raise ValueError(f"num_hashes: must be {accepts}, got {num_hashes!r}")


def check_str(arg: str, value: Any, accepts: str) -> None:
    """``TypeError`` unless ``value`` is a str (its values are the caller's to check)."""
    if not isinstance(value, str):
        raise TypeError(f"{arg}: must be a str ({accepts}), got {_type(value)} {value!r}")


def check_data(data: Any) -> bytes:
    """A serialized filter: ``bytes``, ``bytearray``, ``memoryview`` or any other buffer (a
    ``numpy`` array of ``uint8``); copied to ``bytes``. Not an int (``bytes(5)`` is five zeros)."""
    if isinstance(data, bytes):
        return data
    try:
        view = memoryview(data)
    except TypeError:
        raise TypeError("data: must be bytes, bytearray or memoryview (a serialized filter), "
                        f"got {_type(data)}") from None
    return view.tobytes()


_HASHES_ACCEPTS = "64-bit hashes: a numpy array of uint64 (or other integers), or a list or tuple of ints"
_NONE = object()
_NOT_HASHES = (str, bytes, bytearray, memoryview, bool, float, complex, dict, set, frozenset,
               np.bool_, np.floating, type(None))


def hashes_array(hashes: Any) -> np.ndarray:
    """``hashes`` as ``np.uint64``, in their shape: a NumPy integer array (a signed one wraps,
    as a cast does; a ``uint64`` one is not copied), a list or tuple of ints, one int.

    The dtype says it all, but for a list of ints NumPy makes floats of (ints past 2**63 with
    others) or objects of (past 2**64): its items are checked, then converted exactly. Any
    other dtype (floats, strings, bools) is a ``TypeError``.
    """
    if isinstance(hashes, _NOT_HASHES):
        raise TypeError(f"hashes: must be {_HASHES_ACCEPTS}, got {_type(hashes)}")
    try:
        arr = np.asarray(hashes)
    except ValueError:  # ragged nesting
        raise ValueError(f"hashes: must be {_HASHES_ACCEPTS}, got a ragged {_type(hashes)}") from None
    kind = arr.dtype.kind
    if kind in "ui":
        return arr.astype(np.uint64, copy=False)
    if arr.size == 0:
        return np.zeros(arr.shape, dtype=np.uint64)
    if not isinstance(hashes, (list, tuple)) or kind not in "fO":
        what = f"an array of {arr.dtype}" if isinstance(hashes, np.ndarray) else _type(hashes)
        if isinstance(hashes, (list, tuple)):
            what += f" NumPy reads as {arr.dtype}"
        raise TypeError(f"hashes: must be {_HASHES_ACCEPTS}, got {what}")
    bad = next((v for v in _leaves(hashes) if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer))),
               _NONE)
    if bad is not _NONE:
        raise TypeError(f"hashes: must be {_HASHES_ACCEPTS}, got {_type(bad)} {bad!r} in a {_type(hashes)}")
    try:
        return np.array(hashes, dtype=np.uint64)
    except OverflowError:
        raise ValueError("hashes: must be 64-bit hashes, ints in [0, 2**64) (negative ones, which wrap, only "
                         f"when all are in int64's range), got a {_type(hashes)} of ints outside") from None


def _leaves(values: Any) -> Any:
    """The items of nested lists and tuples."""
    for v in values:
        if isinstance(v, (list, tuple)):
            yield from _leaves(v)
        else:
            yield v
