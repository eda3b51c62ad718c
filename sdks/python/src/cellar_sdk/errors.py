"""What the SDK reports: errors handed to ``on_error`` and the counts ``flush()`` returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


class CellarError(Exception):
    """A problem the SDK met while handling telemetry; never raised into the caller's code.

    ``kind`` is one of:

    - ``"refused"``: the server refused items (``count`` of them) for what they contain; the
      message is the server's, naming the field. Not retried.
    - ``"rejected"``: the server answered a whole request with a 4xx that retrying cannot fix
      (401 unknown key, 403 wrong service or origin, 413 too large); its items are counted refused.
    - ``"dropped"``: items lost on this side: queue full (the newest is dropped), retries
      exhausted, the SDK shut down with items still unsent, or the masking hook failed.
    - ``"retrying"``: a send failed with a retryable outcome (network, 5xx, 408, 429) and will be
      retried after ``retry_in`` seconds. Informational.
    - ``"internal"``: a bug or an unexpected provider object; the call itself was not affected.
    """

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        count: int = 0,
        status: Optional[int] = None,
        retry_in: Optional[float] = None,
        cause: Optional[BaseException] = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.count = count
        self.status = status
        self.retry_in = retry_in
        self.cause = cause

    def __repr__(self) -> str:
        return f"CellarError(kind={self.kind!r}, count={self.count}, status={self.status}, message={self.message!r})"


@dataclass(frozen=True)
class FlushResult:
    """Items handled since the previous ``flush()`` (or since the client started).

    ``sent``: stored by the server. ``refused``: refused by the server (or too large to send
    even after truncation). ``dropped``: lost on this side (see ``CellarError`` kind ``dropped``).
    ``retried``: item sends that were retries (a batch of 10 sent a second time adds 10).
    ``pending``: items still queued when the flush's timeout passed (0 when it completed).
    """

    sent: int = 0
    refused: int = 0
    dropped: int = 0
    retried: int = 0
    pending: int = 0

    @property
    def complete(self) -> bool:
        return self.pending == 0
