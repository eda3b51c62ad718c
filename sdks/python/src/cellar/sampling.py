"""Sampling by session: the same FNV-1a (32 bit) rule in every SDK (docs/sdks.md)."""

from __future__ import annotations

_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193


def fnv1a32(data: bytes) -> int:
    h = _FNV_OFFSET
    for byte in data:
        h ^= byte
        h = (h * _FNV_PRIME) & 0xFFFFFFFF
    return h


def session_sampled(session_id: str, rate: float) -> bool:
    """Kept when ``fnv1a32(utf8(session_id)) / 2**32 < rate``: a session is wholly in or out."""
    if rate >= 1.0:
        return True
    if rate <= 0.0:
        return False
    return fnv1a32(session_id.encode("utf-8", "surrogatepass")) / 4294967296.0 < rate
