"""Hooks, sans-IO: what Claude Code's hook events carry and how their answers
combine (DECISIONS section 3, DEC-HOOK-1..4). Concept map:

- ``events``: the event catalog, what each event's matcher is compared with, the input each carries.
- ``config``: hook definitions from settings and from ``initialize``, and matching.
- ``verdicts``: one hook's answer (exit status and output, or a callback's JSON) as a verdict.
- ``aggregate``: the verdicts of one event combined: deny wins, a failure never approves.
- ``callbacks``: the ``hook_callback`` request, its answer's schema, and the ``initialize`` check.
- ``env_file``: the ``CLAUDE_ENV_FILE`` lines read without a shell: grammar, refused names, bounds.
- ``http``: http hooks: URL check, header interpolation under ``allowedEnvVars``, secret values.
- ``records``: the ``system/hook_started``, ``hook_progress`` and ``hook_response`` records.

Importing the package imports none of these modules.
"""

__all__ = ["aggregate", "callbacks", "config", "env_file", "events", "http", "records", "verdicts"]
