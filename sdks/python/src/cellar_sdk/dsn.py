"""DSN parsing (docs/sdks.md): ``svc-ing-s-<config>.<secret>`` carries its endpoint and service.

The SDK reads the config part without validating the secret and never makes a network call to
do so; the whole string is the bearer token, so an edited DSN is simply an unknown key (401).
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Optional

SERVER_PREFIX = "svc-ing-s-"
CLIENT_PREFIX = "svc-ing-c-"
TELEMETRY_KEY_PREFIX = "cel_tk_"


class ConfigError(ValueError):
    """A setting the SDK cannot run with; raised at construction, before anything is sent."""


@dataclass(frozen=True)
class Credential:
    """What one DSN or key tells the SDK: the bearer token, and the endpoint/service when carried."""

    token: str
    endpoint: Optional[str]
    service: Optional[str]
    kind: str  # "dsn-server" | "telemetry-key"


def _b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def parse_credential(value: str) -> Credential:
    """Parses a server DSN (new or legacy form) or a telemetry key. Client DSNs are refused."""
    if not isinstance(value, str) or not value.strip():
        raise ConfigError("dsn: empty; pass a server DSN (svc-ing-s-...) or set CELLAR_DSN")
    token = value.strip()
    if any(c.isspace() for c in token):
        raise ConfigError("dsn: contains whitespace")
    if token.startswith(CLIENT_PREFIX):
        raise ConfigError(
            "dsn: a client DSN (svc-ing-c-...) is for browser SDKs; the Python SDK takes a server DSN (svc-ing-s-...)"
        )
    if not token.startswith(SERVER_PREFIX):
        # A telemetry key (cel_tk_...) or a legacy key: the endpoint and service come from settings.
        return Credential(token=token, endpoint=None, service=None, kind="telemetry-key")
    rest = token[len(SERVER_PREFIX) :]
    if "." not in rest:
        return Credential(token=token, endpoint=None, service=None, kind="dsn-server")  # legacy DSN
    config_part = rest[: rest.rindex(".")]
    try:
        config = json.loads(_b64url_decode(config_part).decode("utf-8"))
    except (binascii.Error, ValueError, UnicodeDecodeError) as err:
        raise ConfigError(f"dsn: the part before the last '.' is not base64url JSON ({err})") from None
    if not isinstance(config, dict) or config.get("v") != 1:
        raise ConfigError("dsn: unknown config version (expected v=1); update the SDK")
    endpoint = config.get("e")
    service = config.get("s")
    if not isinstance(endpoint, str) or not endpoint.startswith(("http://", "https://")):
        raise ConfigError("dsn: config field e (ingest endpoint) is missing or not an http(s) URL")
    if not isinstance(service, str) or not service:
        raise ConfigError("dsn: config field s (service name) is missing")
    return Credential(token=token, endpoint=endpoint.rstrip("/"), service=service, kind="dsn-server")


def build_dsn(endpoint: str, service: str, secret: str) -> str:
    """The DSN string for an endpoint, service and secret (tests and tools; the server mints real ones)."""
    config = json.dumps({"v": 1, "e": endpoint.rstrip("/"), "s": service}, separators=(",", ":"))
    encoded = base64.urlsafe_b64encode(config.encode("utf-8")).decode("ascii").rstrip("=")
    return f"{SERVER_PREFIX}{encoded}.{secret}"
