"""Wrappers for provider clients, found by duck typing: this package imports no provider SDK."""

from .anthropic import wrap_anthropic
from .openai import wrap_openai

__all__ = ["wrap_anthropic", "wrap_openai"]
