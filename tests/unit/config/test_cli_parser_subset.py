"""The command line is parsed by a parser of only the flags it spells
(start-up, DEC-CLI-3); whatever the tokens, that parse is the parse of the
parser of every flag (DEC-CLI-4: the same values, the same unknown tokens,
the same usage errors)."""

from __future__ import annotations

import argparse
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from agentx.config.cli_args import UsageError, _defaults, _named, build_parser
from agentx.config.cli_flags import FLAGS

NAMES = sorted({name for flag in FLAGS for name in flag.names})
SHORT = sorted(name for name in NAMES if not name.startswith("--"))


def _outcome(parser: argparse.ArgumentParser, argv: list[str], ns: Any) -> object:
    """What a parse gives: the namespace and the unknown tokens, or the error."""
    try:
        parsed, unknown = parser.parse_known_args(list(argv), ns)
    except (argparse.ArgumentError, UsageError) as exc:
        return (type(exc).__name__, str(exc))
    return (sorted(vars(parsed).items()), unknown)


def _both(argv: list[str]) -> tuple[object, object]:
    every = _outcome(build_parser(), argv, None)
    named = _outcome(build_parser(_named(argv)), argv, _defaults())
    return every, named


#: Tokens that exercise argparse's readings of an option string: whole names,
#: ``name=value``, combined short flags with and without a value, the short
#: prefix of a name, values that look like flags, negative numbers, ``--``.
TOKENS = st.one_of(
    st.sampled_from(NAMES),
    st.builds(lambda n, v: f"{n}={v}", st.sampled_from(NAMES), st.sampled_from(["", "x", "-v"])),
    st.builds(lambda a, b: a + b[1:], st.sampled_from(SHORT), st.sampled_from(SHORT)),
    st.builds(lambda a, v: a + v, st.sampled_from(SHORT), st.sampled_from(["x", "1", "=y", "-"])),
    st.sampled_from(["--", "-", "-1", "-x", "--unknown", "--verb", "--print", "hello", "a b", ""]),
)


@given(st.lists(TOKENS, max_size=8))
@example(["--append-system-prompt", "--verbose"])
@example(["-pv"])
@example(["-p", "--", "--verbose"])
@example(["--max-turns", "-1"])
@example(["-dp", "x"])
@example(["--attach", "a", "--attach", "b"])
def test_the_named_flags_parse_as_every_flag_does(argv: list[str]) -> None:
    every, named = _both(argv)
    assert named == every


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--input-format", "stream-json", "--output-format", "stream-json", "--verbose"],
        ["-p", "hi"],
    ],
)
def test_a_common_invocation_registers_only_what_it_names(argv: list[str]) -> None:
    """The control case: the subset is really smaller (else the cut is void)."""
    named = _named(argv)
    assert len(named) <= len([t for t in argv if t.startswith("-")])
    assert named != FLAGS
