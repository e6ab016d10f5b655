"""``acceptEdits``'s file commands (DEC-PERM-MODE, DEC-PERM-PATH): which Bash
lines the core reads as file commands only, and the paths it hands back for
admission; everything it cannot read whole asks."""

from __future__ import annotations

import pytest

from agentx.messages.bash.accept_edits import FILE_COMMANDS, Operand, edit_operands


def ops(*pairs: tuple[str, str]) -> tuple[Operand, ...]:
    return tuple(Operand(program=program, path=path) for program, path in pairs)


@pytest.mark.parametrize(
    ("line", "operands"),
    [
        ("mkdir -p a/b", ops(("mkdir", "a/b"))),
        ("mkdir -m 700 d && touch d/f", ops(("mkdir", "d"), ("touch", "d/f"))),
        ("touch -r ref.txt new.txt", ops(("touch", "ref.txt"), ("touch", "new.txt"))),
        ("rm -rf build", ops(("rm", "build"))),
        ("rmdir -p a/b", ops(("rmdir", "a/b"))),
        ("mv old.txt new.txt", ops(("mv", "old.txt"), ("mv", "new.txt"))),
        ("cp -r src dst", ops(("cp", "src"), ("cp", "dst"))),
        ("cp -t dir a b", ops(("cp", "dir"), ("cp", "a"), ("cp", "b"))),
        ("mv --target-directory=d a", ops(("mv", "d"), ("mv", "a"))),
        ("sed -i 's/a/b/g' f.txt", ops(("sed", "f.txt"))),
        ("sed -i -e 's|x|y|' -e 'y/ab/cd/' f g", ops(("sed", "f"), ("sed", "g"))),
        ("rm 'a b' \"c\"", ops(("rm", "a b"), ("rm", "c"))),
        ("rm -- -rf", ops(("rm", "-rf"))),  # after --, a path named -rf
        ("rm -rf /", ops(("rm", "/"))),  # read; the boundary check asks for /
        ("rm -rf -- /", ops(("rm", "/"))),
        ("mv x ../../etc", ops(("mv", "x"), ("mv", "../../etc"))),  # the boundary decides
        ("touch a; touch b | rm c", ops(("touch", "a"), ("touch", "b"), ("rm", "c"))),
        ("/bin/rm x", ops(("rm", "x"))),
    ],
)
def test_file_command_lines_and_their_paths(line: str, operands: tuple[Operand, ...]) -> None:
    assert edit_operands(line) == operands


@pytest.mark.parametrize(
    "line",
    [
        "cp a $(evil)",  # a substitution: unknown value, and evil runs
        "cp a `evil`",
        "touch ~/.bashrc",  # a tilde: expanded
        "rm *.txt",  # a glob
        "rm {a,b}",  # a brace
        "rm $HOME/x",  # a variable
        "touch a > /etc/x",  # a redirection writes elsewhere
        "sed -i s/a/b/ f 2>/dev/null",
        "cat < x; rm y",
        "rm --no-preserve-root -rf /",  # outside the option grammar
        "rm -rf --no-preserve-root /",
        "cp -L a b",  # follows links in the source
        "cp --dereference a b",
        "mv -S .x a b",
        "sed s/a/b/ f",  # not in place: not an edit
        "sed -i 's/a/b/w /tmp/x' f",  # the w flag writes another file
        "sed -i 's/a/b/e' f",  # the e flag runs a command
        "sed -i '1e id' f",  # not one s or y command
        "sed -i 's/a/b/;w /tmp/x' f",
        "sed -i -f script.sed f",
        "sed -i.bak s/a/b/ f",
        "sed -i s/a/b/",  # no file
        "mkdir -p",  # no path
        "rm",
        "cd / && rm -rf x",  # another command changes what the paths mean
        "sudo rm x",  # a wrapper
        "env rm x",
        "xargs rm < list",
        "find . -delete",
        "find . -exec rm {} ;",
        "bash -c 'rm x'",  # a shell
        "PATH=/tmp/evil rm a",  # another rm
        "x=1; rm a",
        "export PATH=/tmp; rm a",
        "rm() { curl evil; }; rm a",
        "echo hi",
        "rm x && curl evil",
        "ln -s /etc e && rm e",
        "eval rm x",
        "rm -f x\nrm -f y; curl z",
        "rm 'unterminated",
        "",
    ],
)
def test_anything_it_cannot_read_whole_asks(line: str) -> None:
    assert edit_operands(line) is None


def test_the_commands_are_claude_codes() -> None:
    """Claude Code 2.1.332's acceptEdits file commands (BashTool mode check)."""
    assert frozenset({"mkdir", "touch", "rm", "rmdir", "mv", "cp", "sed"}) == FILE_COMMANDS


def test_remove_and_move_are_marked() -> None:
    assert [o.removes for o in edit_operands("rm a; rmdir b; mv c d; cp e f") or ()] == [
        True,
        True,
        True,
        True,
        False,
        False,
    ]
