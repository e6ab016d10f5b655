"""What a failed provider call reports: its error category and a credential-free text.

* **Error mapping** to the spec's assistant error categories
  (:func:`category_for_status`, :func:`category_for_error_type`).
* **Redaction**: provider error text is bounded and scrubbed of every
  credential literal the client knows (WIRE-013 stays fail-closed downstream,
  but an error message must not be what trips it).

Imports no HTTP client, so MCP can redact with :class:`Redactor` cheaply.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import ujson

from agentx.providers.base import ErrorCategory

if TYPE_CHECKING:
    import httpx

#: Provider error text kept in a ProviderError message.
MAX_ERROR_TEXT = 500
#: The error of a stream event that is not one strict JSON object (WIRE-014)
#: or whose members have the wrong shapes.
MALFORMED_EVENT = "provider sent a malformed stream event"

_STATUS_CATEGORY: Mapping[int, ErrorCategory] = {
    400: "invalid_request",
    401: "authentication_failed",
    402: "billing_error",
    403: "authentication_failed",
    404: "invalid_request",
    413: "invalid_request",
    422: "invalid_request",
    429: "rate_limit",
}

_ERROR_TYPE_CATEGORY: Mapping[str, ErrorCategory] = {
    # OpenAI and Azure OpenAI error ``type``/``code`` values.
    "invalid_request_error": "invalid_request",
    "authentication_error": "authentication_failed",
    "invalid_api_key": "authentication_failed",
    "insufficient_quota": "billing_error",
    "rate_limit_exceeded": "rate_limit",
    "server_error": "server_error",
    # Anthropic error ``type`` values.
    "permission_error": "authentication_failed",
    "billing_error": "billing_error",
    "not_found_error": "invalid_request",
    "request_too_large": "invalid_request",
    "rate_limit_error": "rate_limit",
    "api_error": "server_error",
    "overloaded_error": "server_error",
}


def category_for_status(status: int) -> ErrorCategory:
    """Map a final HTTP status to an assistant error category (spec: the
    ``assistant`` record's optional error category)."""
    if status >= 500:
        return "server_error"
    return _STATUS_CATEGORY.get(status, "unknown")


def category_for_error_type(kind: str | None) -> ErrorCategory:
    """Map a provider error ``type`` (OpenAI or Anthropic) to a category."""
    return _ERROR_TYPE_CATEGORY.get(kind or "", "unknown")


#: Statuses that mean the model is overloaded or unavailable.
OVERLOADED_STATUS = frozenset({503, 529})


class ProviderHTTPError(Exception):
    """A terminal failure of one provider call, already credential-free."""

    def __init__(
        self,
        category: ErrorCategory,
        message: str,
        *,
        status: int | None = None,
        headers: httpx.Headers | None = None,
    ) -> None:
        super().__init__(message)
        self.category: ErrorCategory = category
        self.message = message
        self.status = status
        self.headers = headers

    @property
    def overloaded(self) -> bool:
        """HTTP 529 (Anthropic "overloaded") or 503 (unavailable): what
        ``--fallback-model`` answers."""
        return self.status in OVERLOADED_STATUS


class Redactor:
    """Replaces every known credential literal (DEC-AUTH-3) in provider text."""

    def __init__(self, secrets: tuple[str, ...]) -> None:
        spellings = {
            spelling
            for secret in secrets
            if secret
            for spelling in (
                secret,
                ujson.dumps(secret, ensure_ascii=False)[1:-1],
                ujson.dumps(secret, ensure_ascii=False, escape_forward_slashes=False)[1:-1],
            )
        }
        self._secrets = tuple(sorted(spellings, key=len, reverse=True))

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "[redacted]")
        return text
