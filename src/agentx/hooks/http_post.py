"""Http hooks: the POST, in a child process of the session (DECISIONS section 3, DEC-AUTH-3).

An http hook runs as ``python -I -m agentx.hooks.http_post`` (isolated:
neither the cwd nor ``PYTHON*`` variables reach its imports), a child of
the session like a command hook (:func:`start_http_hook`: the runner serves
it in parallel with the others, starts no thread, kills it at its deadline
and the session's end). The
child reads one JSON object on stdin, ``{"url", "headers", "body",
"timeout"}`` (the headers already interpolated: they never appear in an
argument or a variable), POSTs ``body`` as JSON with one deadline from
connect to last byte (:mod:`agentx.providers.net_deadline`), no proxy from
the environment and no redirect, and then:

- a 2xx status: writes at most :data:`MAX_BODY_BYTES` + 1 bytes of the body
  on stdout and exits 0 (the runner reads it as a command hook's stdout; one
  byte past the bound fails the hook);
- anything else (another status, a connection error, the deadline): one line
  on stderr naming the status or the error's kind, never the URL, and exit 1.

It never exits 2: only the server's JSON can block. :func:`http_hook_literals`
is the part of the credential union the settings' http hooks add.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from agentx.hooks.process import MAX_HOOK_OUTPUT_BYTES, HookProcess, start_program
from agentx.messages.hooks.config import HttpHook
from agentx.messages.hooks.http import resolved_headers
from agentx.tools.process import ChildProcesses

#: The most response bytes passed on; the runner refuses one more.
MAX_BODY_BYTES: Final = MAX_HOOK_OUTPUT_BYTES


def http_hook_literals(hooks: Mapping[str, Any], env: Mapping[str, str]) -> frozenset[str]:
    """DEC-AUTH-3: the secret values every http hook of the settings'
    ``hooks`` sends (its interpolated and written-out header values) and
    the user-info and query values of its URL."""
    from agentx.config.registry import endpoint_secrets  # noqa: PLC0415
    from agentx.messages.hooks.http import header_literals  # noqa: PLC0415

    literals: set[str] = set()
    for groups in hooks.values():
        for group in groups:
            for hook in group.get("hooks", ()):
                if hook.get("type") == "http":
                    literals |= header_literals(hook, env)
                    literals |= endpoint_secrets(hook["url"])
    return frozenset(literals)


def start_http_hook(
    spec: HttpHook,
    hook_input: Mapping[str, Any],
    *,
    header_env: Mapping[str, str],
    cwd: Path,
    env: Mapping[str, str],
    children: ChildProcesses,
) -> HookProcess:
    """Start one http hook's POST as a child; its header values are
    interpolated from ``header_env`` (the session's start environment, the
    one the credential union was built from, DEC-AUTH-3)."""
    request = {
        "url": spec.url,
        "headers": resolved_headers(spec.headers, spec.allowed_env_vars, header_env),
        "body": hook_input,
        "timeout": spec.timeout_s,
    }
    stdin = json.dumps(request, ensure_ascii=False, allow_nan=False).encode("utf-8")
    return start_program(
        [sys.executable, "-I", "-m", "agentx.hooks.http_post"],
        stdin,
        hook_input,
        cwd=cwd,
        env=env,
        timeout_s=spec.timeout_s,
        children=children,
        http=True,
    )


def _post(request: Mapping[str, Any]) -> int:
    import httpx  # noqa: PLC0415

    from agentx.providers.net_deadline import deadline_transport  # noqa: PLC0415

    timeout = float(request["timeout"])
    deadline = time.monotonic() + timeout
    body = json.dumps(request["body"], ensure_ascii=False, allow_nan=False).encode("utf-8")
    headers = {"content-type": "application/json", **request["headers"]}
    try:
        with (
            httpx.Client(
                transport=deadline_transport(deadline),
                timeout=timeout,
                follow_redirects=False,
                trust_env=False,
            ) as client,
            client.stream("POST", request["url"], content=body, headers=headers) as response,
        ):
            if not 200 <= response.status_code < 300:
                print(f"http hook: status {response.status_code}", file=sys.stderr)
                return 1
            kept = bytearray()
            for chunk in response.iter_bytes():
                kept += chunk[: MAX_BODY_BYTES + 1 - len(kept)]
                if len(kept) > MAX_BODY_BYTES:
                    break
            # This child's own stdout, the pipe the hook runner reads as a
            # command hook's; agentx's stdout is the writer actor's (WIRE-003).
            sys.stdout.buffer.write(bytes(kept))
            return 0
    except httpx.TimeoutException:
        print(f"http hook: no answer within {timeout:g} s", file=sys.stderr)
    except httpx.HTTPError as exc:
        print(f"http hook: request failed ({type(exc).__name__})", file=sys.stderr)
    return 1


def main() -> int:
    """The child: one POST (see the module docstring); exit 0 or 1."""
    try:
        request = json.loads(sys.stdin.buffer.read())
        return _post(request)
    except Exception as exc:  # never exit 2, never a traceback with the headers
        print(f"http hook: {type(exc).__name__}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
