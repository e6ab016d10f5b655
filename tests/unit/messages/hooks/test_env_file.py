"""``CLAUDE_ENV_FILE`` lines read without a shell (DECISIONS section 3, DEC-AUTH-3)."""

from __future__ import annotations

import pytest

from agentx.messages.hooks.env_file import (
    MAX_ENV_FILE_BYTES,
    MAX_ENV_VARIABLES,
    EnvFile,
    parse_env_file,
)

LINES = [
    pytest.param(b"export A=1\n", {"A": "1"}, 0, id="export"),
    pytest.param(b"A=1", {"A": "1"}, 0, id="bare-no-newline"),
    pytest.param(b"# c\n\n  export A='x y $z'  \n", {"A": "x y $z"}, 0, id="single-quoted"),
    pytest.param(b'export A="say \\"hi\\" \\$5"\n', {"A": 'say "hi" $5'}, 0, id="double-quoted"),
    pytest.param(b"export A=1\nexport A=2\n", {"A": "2"}, 0, id="later-wins"),
    pytest.param(b"A=\n", {"A": ""}, 0, id="empty"),
    pytest.param(b"export A=$HOME\n", {}, 1, id="expansion"),
    pytest.param(b'export A="$HOME"\n', {}, 1, id="expansion-in-double"),
    pytest.param(b"export A=`id`\n", {}, 1, id="backquote"),
    pytest.param(b"export A=1; rm -rf /\n", {}, 1, id="second-command"),
    pytest.param(b"source ~/.profile\n", {}, 1, id="source"),
    pytest.param(b"export 1A=1\n", {}, 1, id="bad-name"),
    pytest.param(b"export A='unterminated\n", {}, 1, id="unterminated"),
    pytest.param(b"export PATH=/evil:$PATH\nexport B=2\n", {"B": "2"}, 1, id="path-expansion"),
    pytest.param(b"export PATH=/evil\n", {}, 1, id="path"),
    pytest.param(b"export LD_PRELOAD=/tmp/x.so\n", {}, 1, id="ld-preload"),
    pytest.param(b"export DYLD_INSERT_LIBRARIES=x\n", {}, 1, id="dyld"),
    pytest.param(b"export BASH_ENV=/tmp/x\nexport ENV=/tmp/x\n", {}, 2, id="shell-startup"),
    pytest.param(b"export BASH_FUNC_ls%%=x\n", {}, 1, id="exported-function"),
    pytest.param(b"export AGENTX_HOME=/x\nexport CLAUDE_ENV_FILE=/x\n", {}, 2, id="own"),
    pytest.param(b"export ANTHROPIC_API_KEY=sk-x\n", {}, 1, id="credential-name"),
    pytest.param(b"export LEAK=pre-SECRET-post\n", {}, 1, id="credential-value"),
    pytest.param(b"export A=\xff\n", {}, 1, id="not-utf8"),
    pytest.param(b"export A=a\0b\n", {}, 1, id="nul"),
]


@pytest.mark.parametrize(("data", "variables", "refused"), LINES)
def test_lines(data: bytes, variables: dict[str, str], refused: int) -> None:
    parsed = parse_env_file(data, secrets=("SECRET",), credential_names=("ANTHROPIC_API_KEY",))
    assert dict(parsed.variables) == variables
    assert len(parsed.refused) == refused
    # A refusal never quotes the file's text.
    assert not any("SECRET" in r or "/evil" in r for r in parsed.refused)


@pytest.mark.parametrize("size", [MAX_ENV_FILE_BYTES, MAX_ENV_FILE_BYTES + 1])
def test_the_file_is_bounded(size: int) -> None:
    line = b"export A=1\n"
    data = line + b"#" * (size - len(line))
    parsed = parse_env_file(data)
    if size <= MAX_ENV_FILE_BYTES:
        assert parsed == EnvFile(variables=(("A", "1"),))
    else:
        assert parsed.variables == () and "exceeds" in parsed.refused[0]


@pytest.mark.parametrize("count", [MAX_ENV_VARIABLES, MAX_ENV_VARIABLES + 1])
def test_the_variables_are_bounded(count: int) -> None:
    data = "".join(f"export V{i}=x\n" for i in range(count)).encode()
    parsed = parse_env_file(data)
    assert len(parsed.variables) == MAX_ENV_VARIABLES
    assert len(parsed.refused) == count - MAX_ENV_VARIABLES
