"""Provider clients: one model request in, a stream of provider events out.

Concept map:

The interface
- ``base``: what the turn engine drives: ProviderClient, ModelRequest, the events, the cancel token.
- ``build``: the client for the frozen selection (``build_client``; DEC-AUTH-2, DEC-SCRIPT-1).
- ``errors``: a failed call's error category and its credential-free text.
- ``event_json``: provider JSON that may reach stdout (WIRE-014).

HTTP
- ``http``: the shared streaming HTTP poster (httpx): retries, cancellation, the deadline.
- ``net_deadline``: one overall deadline per network operation, connect to last byte.
- ``sse``: the ``text/event-stream`` decoder the clients read their streams with.
- ``rate_limits``: rate-limit windows from response headers, the ``rate_limit_event`` state.

The clients
- ``anthropic``: the Anthropic Messages API (DEC-AUTH-2 ``anthropic``).
- ``openai``: Chat Completions, OpenAI-compatible servers and Azure OpenAI.
- ``openai_messages``: the conversation projected onto Chat Completions messages.
- ``scripted``: the offline scripted provider (DEC-SCRIPT-1).

Importing the package imports none of these modules.
"""

__all__ = [
    "anthropic",
    "base",
    "build",
    "errors",
    "event_json",
    "http",
    "net_deadline",
    "openai",
    "openai_messages",
    "rate_limits",
    "scripted",
    "sse",
]
