"""Provider clients: one model request in, a stream of provider events out.

Concept map:

- ``base``: the interface the turn engine drives (``ProviderClient``,
  ``ModelRequest``, the events, the cancel token).
- ``http``: the shared streaming HTTP poster (httpx): retries, cancellation,
  the overall deadline; ``sse``: the event-stream decoder it reads with;
  ``errors``: error categories, the call's error and credential redaction;
  ``rate_limits``: rate-limit windows and the ``rate_limit_event`` state.
- ``anthropic``: the Anthropic Messages API (DEC-AUTH-2 ``anthropic``).
- ``openai``: Chat Completions, OpenAI-compatible and Azure OpenAI;
  ``openai_messages``: the conversation projected onto its messages.
- ``scripted``: the offline scripted provider (DEC-SCRIPT-1).
- ``build``: the client for the frozen selection (``build_client``).
- ``event_json``: provider JSON that may reach stdout.

Importing the package imports none of these modules.
"""

__all__ = [
    "anthropic",
    "base",
    "build",
    "errors",
    "event_json",
    "http",
    "openai",
    "openai_messages",
    "rate_limits",
    "scripted",
    "sse",
]
