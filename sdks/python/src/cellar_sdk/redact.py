"""Opt-in redactors, the masking walk and truncation of oversized content.

A redactor is a function ``str -> str``. The built-in ones are named in ``Client(redact=[...])``:
``"emails"``, ``"cards"`` (13-19 digit numbers that pass the Luhn check, spaces or dashes
allowed), ``"secrets"`` (API keys and tokens of well-known shapes, JWTs, bearer headers,
``password=...`` assignments). They run on the text a payload carries (request, responses,
event body and attributes), never on identifiers, timestamps, roles or model names.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, List, Sequence, Union

Redactor = Callable[[str], str]

EMAIL_MARK = "[email]"
CARD_MARK = "[card]"
SECRET_MARK = "[secret]"

_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
# 13-19 digits, single spaces or dashes between them, not glued to other digits.
_CARD_CANDIDATE = re.compile(r"(?<![\d])\d(?:[ -]?\d){12,18}(?![\d])")
_SECRETS = re.compile(
    "|".join(
        [
            r"\bsk-(?:proj-|ant-[a-z0-9]+-|live-|test-)?[A-Za-z0-9_-]{20,}",  # OpenAI, Anthropic, Stripe-like
            r"\b(?:rk|pk|sk)_(?:live|test)_[A-Za-z0-9]{16,}",  # Stripe
            r"\bAKIA[0-9A-Z]{16}\b",  # AWS access key id
            r"\bgh[pousr]_[A-Za-z0-9]{30,}",  # GitHub
            r"\bgithub_pat_[A-Za-z0-9_]{40,}",
            r"\bxox[abposr]-[A-Za-z0-9-]{10,}",  # Slack
            r"\bAIza[0-9A-Za-z_-]{35}",  # Google API key
            r"\bglpat-[A-Za-z0-9_-]{20,}",  # GitLab
            r"\bsvc-ing-[sc]-[A-Za-z0-9_.-]{16,}",  # Cellar DSNs
            r"\bcel_tk_[A-Za-z0-9_-]{16,}",  # Cellar telemetry keys
            r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",  # JWT
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
        ]
    )
)
_BEARER = re.compile(r"(?i)\b(bearer|token|basic)\s+[A-Za-z0-9._~+/=-]{16,}")
_ASSIGNED = re.compile(r"(?i)\b(password|passwd|pwd|secret|api[_-]?key|access[_-]?token)(\s*[:=]\s*)(\"[^\"]+\"|'[^']+'|\S+)")


def luhn_valid(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def redact_emails(text: str) -> str:
    return _EMAIL.sub(EMAIL_MARK, text) if "@" in text else text


def redact_cards(text: str) -> str:
    def replace(m: "re.Match[str]") -> str:
        digits = m.group(0).replace(" ", "").replace("-", "")
        return CARD_MARK if 13 <= len(digits) <= 19 and luhn_valid(digits) else m.group(0)

    return _CARD_CANDIDATE.sub(replace, text)


def redact_secrets(text: str) -> str:
    text = _SECRETS.sub(SECRET_MARK, text)
    text = _BEARER.sub(lambda m: f"{m.group(1)} {SECRET_MARK}", text)
    return _ASSIGNED.sub(lambda m: f"{m.group(1)}{m.group(2)}{SECRET_MARK}", text)


BUILT_IN: Dict[str, Redactor] = {"emails": redact_emails, "cards": redact_cards, "secrets": redact_secrets}


def resolve_redactors(spec: Sequence[Union[str, Redactor]]) -> List[Redactor]:
    out: List[Redactor] = []
    for item in spec:
        if callable(item):
            out.append(item)
        elif item in BUILT_IN:
            out.append(BUILT_IN[item])
        else:
            raise ValueError(f"redact: unknown redactor {item!r}; built-in ones: {', '.join(BUILT_IN)}")
    return out


# Keys whose string values are identifiers or labels, not content: never redacted or truncated.
_STRUCTURAL_KEYS = frozenset(
    {"id", "object", "model", "role", "type", "finish_reason", "tool_call_id", "call_id", "name", "index", "status"}
)


def map_text(value: Any, fn: Callable[[str], str], key: str = "") -> Any:
    """``value`` with ``fn`` applied to each content string; containers are copied only where a
    string changed (the caller's own dicts are never mutated, and unchanged ones are not copied)."""
    if isinstance(value, str):
        return value if key in _STRUCTURAL_KEYS else fn(value)
    if isinstance(value, dict):
        out = None
        for k, v in value.items():
            m = map_text(v, fn, k)
            if m is not v and out is None:
                out = dict(value)
            if out is not None:
                out[k] = m
        return value if out is None else out
    if isinstance(value, list):
        items = None
        for i, v in enumerate(value):
            m = map_text(v, fn, key)
            if m is not v and items is None:
                items = list(value)
            if items is not None:
                items[i] = m
        return value if items is None else items
    return value


def truncation_marker(dropped: int) -> str:
    return f"...[truncated {dropped} chars by cellar]"


def truncate_text(limit: int) -> Callable[[str], str]:
    def cut(text: str) -> str:
        if len(text) <= limit:
            return text
        return text[:limit] + truncation_marker(len(text) - limit)

    return cut


CONTENT_FIELDS = ("request", "responses", "body", "attributes")


def map_content(payload: Dict[str, Any], fn: Callable[[str], str]) -> Dict[str, Any]:
    """The payload with ``fn`` applied to the strings of its content fields only."""
    out = dict(payload)
    for field in CONTENT_FIELDS:
        if field in out:
            out[field] = map_text(out[field], fn, field)
    return out
