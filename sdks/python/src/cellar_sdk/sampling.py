"""Sampling by session, the same rule in every SDK (docs/sdks.md, "Sampling").

Kept when ``sample_hash(session_id) / 2**32 < rate`` where
``sample_hash = fmix32(fnv1a32(utf8(session_id)))``: FNV-1a (32 bit) passed through MurmurHash3's
32-bit finalizer, so ids that differ only in a counter keep the rate. Vectors every SDK checks:
``sdks/sampling-vectors.json``.
"""

from __future__ import annotations

_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193
_MASK = 0xFFFFFFFF


def fnv1a32(data: bytes) -> int:
    h = _FNV_OFFSET
    for byte in data:
        h ^= byte
        h = (h * _FNV_PRIME) & _MASK
    return h


def fmix32(h: int) -> int:
    """MurmurHash3's 32-bit finalizer: full avalanche over the 32 bits."""
    h &= _MASK
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK
    h ^= h >> 16
    return h


def sample_hash(session_id: str) -> int:
    """``fmix32(fnv1a32(utf8(session_id)))``, an unsigned 32-bit integer."""
    return fmix32(fnv1a32(session_id.encode("utf-8", "surrogatepass")))


def session_sampled(session_id: str, rate: float) -> bool:
    """Kept when ``sample_hash(session_id) / 2**32 < rate``: a session is wholly in or out."""
    if rate >= 1.0:
        return True
    if rate <= 0.0:
        return False
    return sample_hash(session_id) / 4294967296.0 < rate
