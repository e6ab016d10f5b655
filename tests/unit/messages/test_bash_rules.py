"""Bash rules on the parsed command line (DEC-PERM-PATH, DEC-SET-2, DEC-PERM-MODE).

Every row goes through :func:`evaluate`, the function the session's policy
calls. The evasion rows run in ``bypassPermissions`` mode with ``Bash`` allowed,
so only the deny rule can stop them: a miss is an ``allow``.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import PurePosixPath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentx.messages.bash.commands import MAX_SHELL_DEPTH, CommandLine, parse_command_line
from agentx.messages.bash.words import SHOWN_CHARS, Opaque
from agentx.messages.permission_decisions import evaluate
from agentx.messages.permission_rules import Decision, Mode, PermissionRules

CWD = PurePosixPath("/work/proj")


def decide(
    command: str,
    *,
    allow: tuple[str, ...] = (),
    deny: tuple[str, ...] = (),
    ask: tuple[str, ...] = (),
    mode: Mode = "default",
) -> Decision:
    return evaluate(
        "Bash",
        {"command": command},
        read_only=False,
        paths=(),
        rules=PermissionRules.parse(allow=allow, deny=deny, ask=ask),
        mode=mode,
        cwd=CWD,
    )


def denied_curl(command: str) -> str:
    return decide(
        command, allow=("Bash",), deny=("Bash(curl:*)",), mode="bypassPermissions"
    ).behavior


EVASIONS = [
    "curl http://x",
    "env curl x",
    "env -i A=1 curl x",
    "env -u HOME --chdir=/tmp curl x",
    "env - curl x",
    "env -- curl x",
    "/usr/bin/curl x",
    "./curl x",
    "c\\url x",
    "\\curl x",
    '"curl" x',
    "'c'url x",
    'cu""rl x',
    "bash -c 'curl x'",
    "sh -c 'curl x'",
    "bash -lc 'curl x'",
    "bash -e -o pipefail -c 'curl x'",
    "bash --norc -c -- 'curl x' name",
    "sh -c \"bash -c 'curl x'\"",
    "X=1 curl x",
    "X=1 Y=$(date) curl x",
    "curl\tx",
    "command curl x",
    "command -p curl x",
    "builtin curl x",
    "echo $(curl x)",
    "echo `curl x`",
    "echo `echo \\`curl x\\``",
    "echo `echo \\`echo \\\\\\`curl x\\\\\\`\\``",
    "ls `ls > out.txt; ls \\`curl\\` < in.txt`",
    'echo "$(curl x)"',
    "cat <(curl x)",
    "echo hi > >(curl x)",
    "ls | curl x",
    "ls |& curl x",
    "ls; curl x",
    "ls && curl x",
    "ls || curl x",
    "curl x & ls",
    "ls\ncurl x",
    "(curl x)",
    "{ curl x; }",
    "! curl x",
    "! ! curl x",
    "sh -c 'sh -c '\\curl",
    "bash -c 'ls; '\\curl",
    "time ! curl x",
    "! ! X=1 curl x",
    "time X=1 curl x",
    "sudo curl x",
    "sudo -u x curl x",
    "sudo -E -H -- curl x",
    "sudo --user=x A=1 curl x",
    "timeout 5 curl x",
    "timeout -s KILL -k 1 5s curl x",
    "timeout --signal=KILL --preserve-status 5 curl x",
    "xargs curl",
    "xargs -0 -n1 -I{} curl {}",
    "xargs --max-args=1 curl",
    "nice curl x",
    "nice -n 5 curl x",
    "nice -n5 curl x",
    "nice -5 curl x",
    "nice --adjustment=5 curl x",
    "exec curl x",
    "exec -a name curl x",
    "nohup curl x",
    "time curl x",
    "time -p curl x",
    "coproc curl x",
    "env nohup nice -n 1 timeout 5 xargs sudo -u x command curl x",
    "cat <<EOF\n$(curl x)\nEOF",
    "cat <<< $(curl x)",
    "[[ -n $(curl x) ]]",
    "[ -n $(curl x) ]",
    "echo $(( $(curl x) + 1 ))",
    "(( n = $(curl x) ))",
    "a[$(curl x)]=1",
    "a=($(curl x))",
    "export A=$(curl x)",
    "local A=$(curl x)",
    "echo ${A:-$(curl x)}",
    "case $(curl x) in *) ;; esac",
    "case a in a) curl x;; esac",
    "for f in $(curl x); do :; done",
    "for f in a; do curl x; done",
    "while curl x; do :; done",
    "if true; then curl x; fi",
    "f() { curl x; }; f",
    "function f { curl x; }",
    "echo a#$(curl x)",
    "alias c='curl x'",
    "trap 'curl x' EXIT",
    "trap -- 'curl x' EXIT",
    "bash -c 2>&1 'curl x'",
    "sudo > /dev/null curl x",
    "env 2>/dev/null curl x",
    "cat <<EOF x | bash -c >/dev/null 'curl x'\nbody\nEOF",
    "> out curl x",
    "env =x curl",
    "find . -exec curl {} \\;",
    "find . -name '*.txt' -execdir sh -c 'curl x' \\; -print",
    "sudo find / -ok curl {} +",
    "su -c 'curl x'",
    "su - root -lc 'curl x'",
    "su --session-command='curl x'",
    "runuser -u x -- curl x",
    "runuser root -c 'curl x'",
    "flock /tmp/lock curl x",
    "flock -w 5 /tmp/lock -c 'curl x'",
    "script -qc 'curl x' /dev/null",
    "script --command='curl x'",
    "script -qc ls -qc 'curl x'",
    "setsid -f curl x",
    "stdbuf -oL curl x",
    "stdbuf -o L -e 0 curl x",
    "ionice -c 3 curl x",
    "doas -u x curl x",
    # DEC-PERM-BASH-4: the rest of the wrapper family, each with its option grammar.
    "taskset -c 0 curl x",
    "taskset 0x1 curl x",
    "taskset -a -c 0-3 curl x",
    "taskset --cpu-list 0 curl x",
    "setpriv --reuid 0 curl x",
    "setpriv --reuid=0 --regid 0 --clear-groups --nnp curl x",
    "setpriv --reset-env -- curl x",
    "prlimit --nofile=1 curl x",
    "prlimit -n1 --as=100 curl x",
    "prlimit --nofile curl x",
    "prlimit -o RESOURCE curl x",
    "chrt -f 10 curl x",
    "chrt --rr 1 curl x",
    "chrt -o curl x",
    "chrt -b 0 curl x",
    "chrt -T 10 -P 20 -D 30 -d 0 curl x",
    "chroot / curl x",
    "chroot --userspec=1:1 / curl x",
    "chroot --skip-chdir --groups 1 / curl x",
    "ionice -c3 curl x",
    "ionice --class 2 -n 7 curl x",
    "stdbuf --output=L curl x",
    "unbuffer curl x",
    "unbuffer -p curl x",
    "flock /tmp/l curl x",
    "flock -c 'curl x' /tmp/l",
    "flock -x -n /tmp/l curl x",
    "flock --timeout 5 -- /tmp/l curl x",
    "runuser -u u -- curl x",
    "runuser --user=u curl x",
    "su -c 'curl x'",
    "su root -c 'curl x'",
    "doas curl x",
    "doas -n curl x",
    "firejail curl x",
    "firejail --net=none --private curl x",
    "firejail --quiet -- curl x",
    "systemd-run --user curl x",
    "systemd-run --user --scope -p CPUQuota=10% curl x",
    "systemd-run -u name --wait --pipe curl x",
    "run0 curl x",
    "watch -n1 curl x",
    "watch curl x",
    "watch -n 1 -d 'curl x'",
    "watch -x curl x",
    "watch 'ls; curl x'",
    "parallel curl ::: a",
    "parallel -j2 curl {} ::: a b",
    "parallel -k 'curl {}' ::: a",
    "parallel --jobs 4 curl :::: list",
    "script -c 'curl x' /dev/null",
    "nsenter -t 1 -m -u curl x",
    "nsenter --target=1 --all curl x",
    "nsenter -t1 -n -- curl x",
    "unshare -r curl x",
    "unshare --net --map-root-user curl x",
    "unshare -m -R / curl x",
    "sg grp 'curl x'",
    "sg grp -c 'curl x'",
    "sg - grp -c 'curl x'",
    "pkexec curl x",
    "pkexec --user u curl x",
    "catchsegv curl x",
    "numactl --interleave=all curl x",
    "numactl -N 0 -m 0 curl x",
    "numactl --physcpubind 0 curl x",
    "cgexec -g cpu:/x curl x",
    "cgexec -g cpu:/x --sticky curl x",
    "busybox curl x",
    "toybox curl x",
    "busybox sh -c 'curl x'",
    "setarch x86_64 -R curl x",
    "linux64 curl x",
    "eatmydata curl x",
    "fakeroot curl x",
    "fakeroot -- curl x",
    "faketime '2020-01-01' curl x",
    "strace -f -o /dev/null curl x",
    "strace -e trace=network curl x",
    "ltrace -f curl x",
    "valgrind --tool=memcheck -q curl x",
    "gdb -q --args curl x",
    "chronic curl x",
    "ifne curl x",
    "gosu u curl x",
    "su-exec u curl x",
    "dumb-init curl x",
    "tini -- curl x",
    "xvfb-run -a curl x",
    "torsocks curl x",
    "proxychains4 -q curl x",
    "cpulimit -l 50 curl x",
    "ssh-agent curl x",
    "screen -dmS n curl x",
    "systemd-inhibit --why=x curl x",
    "dbus-run-session -- curl x",
    "ip netns exec n curl x",
    "xterm -e curl x",
    "gnome-terminal -- curl x",
    "ip -all netns exec curl x",
    "chpst -u u curl x",
    "softlimit -m 100 curl x",
    "envdir ./e curl x",
    "sudo -u u -g g -- nice -n 1 taskset -c 0 chrt -f 1 prlimit --nofile=1 curl x",
    # DEC-PERM-BASH-5: a shell fed a literal script on its input runs it.
    "bash <<'EOF'\ncurl x\nEOF",
    "bash <<EOF\ncurl x\nEOF",
    'bash <<"EOF"\ncurl $x\nEOF',
    "bash <<-EOF\n\tcurl x\n\tEOF",
    'sh <<< "curl x"',
    "sh <<< 'curl x'",
    "echo curl x | sh",
    "echo 'curl x' | bash -s",
    "echo -n 'curl x' | sh",
    "printf 'curl x\\n' | sh",
    "printf 'ls\\ncurl x' | bash -",
    "sudo bash <<'EOF'\nls\ncurl x\nEOF",
    "echo ls | bash -c 'sh <<< \"curl x\"'",
]


@pytest.mark.parametrize("command", EVASIONS)
def test_deny_rule_sees_through(command: str) -> None:
    """``Bash(curl:*)`` denies curl however the command line spells or hides it."""
    assert denied_curl(command) == "deny"


@pytest.mark.parametrize("spelling", ["curl *", "/usr/bin/curl *", "curl*"])
@pytest.mark.parametrize("command", EVASIONS)
def test_claude_code_spellings_deny_the_same(spelling: str, command: str) -> None:
    """``Bash(curl *)`` (Claude Code's newer spelling) and wildcard forms deny as ``curl:*``."""
    decision = decide(
        command, allow=("Bash",), deny=(f"Bash({spelling})",), mode="bypassPermissions"
    )
    assert decision.behavior == "deny"


@pytest.mark.parametrize(
    ("command", "rule", "matches"),
    [
        ("curl", "Bash(curl *)", True),
        ("curly x", "Bash(curl *)", False),
        ("curly x", "Bash(curl*)", True),
        ("git push origin main", "Bash(git * main)", True),
        ("git push origin dev", "Bash(git * main)", False),
        ("sudo git log main", "Bash(git * main)", True),
        ("git log $BRANCH", "Bash(git * main)", True),
        ("ls $X", "Bash(git * main)", False),
        ("node --version", "Bash(* --version)", True),
        ("node -v", "Bash(* --version)", False),
        ("ls; node --version", "Bash(* --version)", True),
        ("lsof -i", "Bash(ls*)", True),
        ("rm -rf /tmp/x", "Bash(rm -rf *)", True),
        ("rm -r -f /tmp/x", "Bash(rm -rf *)", False),
        ("anything at all", "Bash(*)", True),
        ("eval x", "Bash(*)", True),
    ],
)
def test_wildcard_deny_rules(command: str, rule: str, matches: bool) -> None:
    """A ``*`` anywhere matches any text of a simple command, as Claude Code matches it."""
    decision = decide(command, allow=("Bash",), deny=(rule,), mode="bypassPermissions")
    assert (decision.behavior == "deny") is matches, decision.reason


@pytest.mark.parametrize(
    ("command", "rule", "expect"),
    [
        ("git log main", "Bash(git * main)", "allow"),
        ("git log main && rm x", "Bash(git * main)", "ask"),
        ("git log $B main", "Bash(git * main)", "ask"),
        ("npm run test:unit", "Bash(npm run test*)", "allow"),
        ("npm run build", "Bash(npm run test*)", "ask"),
        ("ls -la", "Bash(ls *)", "allow"),
        ("ls", "Bash(ls *)", "allow"),
        ("lsof", "Bash(ls *)", "ask"),
        ("eval x", "Bash(*)", "allow"),
        ("sudo make all", "Bash(make *)", "allow"),
    ],
)
def test_wildcard_allow_rules(command: str, rule: str, expect: str) -> None:
    assert decide(command, allow=(rule,)).behavior == expect


#: Lines the matcher cannot see through, with (a word of) the reason it gives.
OPAQUE = [
    ("eval curl x", "eval"),
    ("eval $CMD", "eval"),
    ("source ./x.sh", "source"),
    (". ./x.sh", "."),
    ("$CMD x", "not a plain word"),
    ("${CMD} x", "not a plain word"),
    ('"$CMD" x', "not a plain word"),
    ("$(echo curl) x", "not a plain word"),
    ("`echo curl` x", "not a plain word"),
    ("$'\\x63url' x", "not a plain word"),
    ("cur? x", "not a plain word"),
    ("c[u]rl x", "does not parse"),
    ("~/bin/x", "not a plain word"),
    ("{curl,x}", "does not parse"),
    ("echo 'unterminated", "does not parse"),
    ("echo $(", "does not parse"),
    ("if then fi", "does not parse"),
    ("cu\\\nrl x", "line continuation"),
    ("ls\n\\curl x", "line break inside a word"),
    ("=]\\)}\\\\\n\\\n'curl'", "line break inside a command"),
    ("{ ls; } > f curl", "belong to no command"),
    ("ls\\\\\n\\\n > f curl", "line break inside a command"),
    ("echo a\x00b", "NUL"),
    ("echo \ud800", "not valid Unicode"),
    ("BASH_ENV=./x.sh bash -c ls", "BASH_ENV"),
    ("PS4='$(curl x)' bash -xc ls", "PS4"),
    ("export PROMPT_COMMAND=x", "PROMPT_COMMAND"),
    ("env BASH_ENV=./x.sh bash -c ls", "bash runs"),
    ("env 'BASH_FUNC_ls%%=() { curl x; }' bash -c ls", "bash runs"),
    ("env -S 'curl x'", "env -S"),
    ("env -iS'curl x'", "env -S"),
    ("hash -p /usr/bin/curl ls", "hash -p"),
    ("enable -f ./x.so x", "enable -f"),
    ("compgen -C 'curl x' y", "compgen -C"),
    ("mapfile -t -C 'curl x' -c 1 a < f", "mapfile -C"),
    ('bash -c "$BODY"', "not a plain word"),
    ('trap "$ACTION" EXIT', "not a plain word"),
    ("alias x=$V", "not a plain word"),
    ("timeout --frobnicate 5 curl x", "does not know"),
    ("sudo -Z curl x", "does not know"),
    ("xargs -Q curl", "does not know"),
    ('su -c "$CMD"', "not a plain word"),
    ("flock -c", "does not know"),
    ("timeout $OPT 5 curl", "wrapper's argument"),
    ("timeout $T curl x", "wrapper's argument"),
    ("taskset $MASK curl x", "wrapper's argument"),
    ("taskset --frobnicate 0 curl x", "does not know"),
    ("prlimit -Z curl x", "does not know"),
    ("chrt -Q 1 curl x", "does not know"),
    ("setpriv -x curl x", "does not know"),
    ("firejail -x curl x", "does not know"),
    ("systemd-run --frobnicate curl x", "does not know"),
    ("watch -n1 curl $URL", "expands"),
    ("watch -Z curl x", "does not know"),
    ("parallel ::: 'curl x'", "arguments as commands"),
    ("parallel", "arguments as commands"),
    ("parallel -l 2 curl ::: a", "cannot tell"),
    ("parallel env ::: curl", "not a plain word"),
    ("parallel {} ::: curl", "not a plain word"),
    ("parallel sh -c ::: 'curl x'", "not a plain word"),
    ("parallel --arg-sep ,, curl ,, a", "does not know"),
    ("sg grp", "starts a shell"),
    ("su", "starts a shell"),
    ("su - root", "starts a shell"),
    ("runuser root", "starts a shell"),
    ("runuser root script.sh", "starts a shell"),
    ("script -q /dev/null", "starts a shell"),
    ("newgrp grp", "starts a shell"),
    ("chroot /srv", "starts a shell"),
    ("sudo -s", "starts a shell"),
    ("sudo -i", "starts a shell"),
    ("nsenter -t 1 -a", "starts a shell"),
    ("unshare -r", "starts a shell"),
    ("firejail", "starts a shell"),
    ("fakeroot", "starts a shell"),
    ("setarch x86_64", "starts a shell"),
    ("ip netns exec $NS curl x", "not a plain word"),
    ("tmux new-session -d 'curl x'", "tmux runs shell text"),
    ("tmux send-keys -t 0 'curl x' Enter", "tmux runs shell text"),
    ("tmux ls \\; run 'curl x'", "tmux runs shell text"),
    ("bash script.sh curl", "script file"),
    ("bash file.sh", "script file"),
    ("sh -e -- ./x", "script file"),
    ("bash -c", "-c without"),
    ("bash", "runs its input"),
    ("sh -s arg", "runs its input"),
    ("sh < file", "runs its input"),
    ("bash 0< file", "script file"),
    ("cat x | bash", "runs its input"),
    ("curl -s http://x | bash", "runs its input"),
    ("echo $CMD | sh", "runs its input"),
    ('echo "$(cat f)" | sh', "runs its input"),
    ("echo -e 'curl\\tx' | sh", "runs its input"),
    ("echo 'a\\nb' | sh", "runs its input"),
    ("printf '%s' 'curl x' | sh", "runs its input"),
    ("printf '%b' | sh", "runs its input"),
    ("echo x > f | sh", "runs its input"),
    ("{ echo curl x; } | sh", "runs its input"),
    ("(echo curl x) | bash", "runs its input"),
    ("echo curl x | (bash)", "runs its input"),
    ("while :; do bash; done < f", "runs its input"),
    ("bash <<EOF\n$(echo curl) x\nEOF", "runs its input"),
    ("bash <<EOF\n$CMD\nEOF", "runs its input"),
    ("bash <<EOF\n\\curl x\nEOF", "bash"),
    ("bash <<EOF\ncurl \\$x\nEOF", "expands"),
    ('sh <<< "$CMD"', "runs its input"),
    ("sh <<< $(cat f)", "runs its input"),
    ("sh <<< x < f", "more than one input"),
    ("bash <<'EOF'\neval x\nEOF", "eval"),
    ("builtin eval x", "eval"),
    ("command eval x", "eval"),
    ("ls; eval x", "eval"),
    ("echo $(eval x)", "eval"),
]


@pytest.mark.parametrize(("command", "reason"), OPAQUE)
def test_opaque_lines_fail_closed(command: str, reason: str) -> None:
    """Deny and ask rules match what the matcher cannot see through; allow rules do not."""
    line = parse_command_line(command)
    assert isinstance(line, Opaque)
    assert reason in line.reason
    assert len(line.reason) < 2 * SHOWN_CHARS + 40
    unrelated = "Bash(zzz:*)"
    denied = decide(command, allow=("Bash(echo:*)",), deny=(unrelated,))
    assert denied.behavior == "deny"
    assert denied.reason.startswith(f"denied by rule {unrelated} (the command cannot be checked: ")
    assert decide(command, ask=(unrelated,), mode="bypassPermissions").behavior == "ask"
    every = ("Bash(eval:*)", "Bash(source:*)", "Bash(.:*)", "Bash(echo:*)", "Bash(ls:*)")
    assert decide(command, allow=(*every, "Bash(curl:*)", "Bash(bash:*)")).behavior == "ask"
    # The bare rule needs no parse: it still allows and denies everything.
    assert decide(command, allow=("Bash",)).behavior == "allow"
    assert decide(command, deny=("Bash",), mode="bypassPermissions").reason == "denied by rule Bash"


#: Commands that only look like curl: the deny rule must leave them alone.
NOT_CURL = [
    "curly x",
    "xcurl x",
    "echo curl",
    "echo 'curl x'",
    "grep -r curl .",
    "command -v curl",
    "command -V curl",
    "sudo -l curl",
    "cat <<'EOF'\n$(curl x)\nEOF",
    "echo '$(curl x)'",
    "((curl))",
    "echo a # curl x",
    "env",
    "timeout 5",
    "curl_config=1 ls",
    "find . -name curl",
    "echo `echo \\`echo curl x\\``",
    "taskset -p 0x1 123",
    "taskset -c 0 curly",
    "chrt -p 1",
    "chrt -m",
    "prlimit -p 1 --nofile=1",
    "ionice -p 1",
    "watch -n1 ls",
    "watch echo curl",
    "parallel echo ::: curl",
    "parallel echo curl ::: a",
    "setpriv -d",
    "flock /tmp/l echo curl",
    "sg grp 'echo curl'",
    "ip addr show curl",
    "tmux ls",
    "tmux kill-server",
    "gdb curl",
    "strace -c -p 1",
    "bash <<'EOF'\necho curl x\nEOF",
    "sh <<< 'echo curl'",
    "echo 'echo curl' | sh",
    "echo curl x | cat",
    "echo curl x > f",
    "cat <<'EOF'\ncurl x\nEOF",
]


@pytest.mark.parametrize("command", NOT_CURL)
def test_deny_rule_does_not_overreach(command: str) -> None:
    assert denied_curl(command) == "allow"


#: (command, allow rules, expected behaviour in default mode)
ALLOWS = [
    ("git status", ("Bash(git status:*)",), "allow"),
    ("git status -s && git status", ("Bash(git status:*)",), "allow"),
    ("ls | grep x", ("Bash(ls:*)", "Bash(grep:*)"), "allow"),
    ("ls | grep x", ("Bash(ls:*)",), "ask"),
    ("ls; rm -rf ~", ("Bash(ls:*)",), "ask"),
    ("ls $(rm x)", ("Bash(ls:*)",), "ask"),
    ("ls $(pwd)", ("Bash(ls:*)", "Bash(pwd)"), "allow"),
    ("ls `ls \\`pwd\\``", ("Bash(ls:*)",), "ask"),
    ("ls `ls \\`pwd\\``", ("Bash(ls:*)", "Bash(pwd)"), "allow"),
    ("echo hi > out.txt", ("Bash(echo:*)",), "allow"),
    ("cat <<EOF > f\nhello\nEOF", ("Bash(cat:*)",), "allow"),
    ("/bin/ls -la", ("Bash(ls:*)",), "allow"),
    ("ls", ("Bash(/bin/ls:*)",), "allow"),
    ("X=1 make test", ("Bash(make test)",), "allow"),
    ("make test 2>&1", ("Bash(make test)",), "allow"),
    ("make test x", ("Bash(make test)",), "ask"),
    ("make $TARGET", ("Bash(make $TARGET)",), "allow"),
    ("make $OTHER", ("Bash(make $TARGET)",), "ask"),
    ("sudo apt update", ("Bash(apt update:*)",), "allow"),
    ("sudo apt update", ("Bash(sudo apt update)",), "allow"),
    ("sudo apt update", ("Bash(sudo:*)",), "ask"),
    ("env curl x", ("Bash(env:*)",), "ask"),
    ("env", ("Bash(env:*)",), "allow"),
    ("timeout 60 make all", ("Bash(timeout 60 make:*)",), "allow"),
    ("timeout 60 make all", ("Bash(timeout 60:*)",), "ask"),
    ("xargs echo", ("Bash(echo:*)",), "allow"),
    ("xargs echo", ("Bash(echo)",), "ask"),
    ("bash -c 'ls && pwd'", ("Bash(ls:*)", "Bash(pwd)"), "allow"),
    ("bash -c 'ls && rm x'", ("Bash(ls:*)", "Bash(bash:*)"), "ask"),
    ("bash script.sh", ("Bash(bash script.sh)",), "ask"),
    ("echo ls | sh", ("Bash(echo:*)", "Bash(ls:*)"), "allow"),
    ("echo 'ls; rm x' | sh", ("Bash(echo:*)", "Bash(ls:*)"), "ask"),
    ("sh <<'EOF'\nls\nEOF", ("Bash(ls:*)",), "allow"),
    ("taskset -c 0 make all", ("Bash(make:*)",), "allow"),
    ("taskset -c 0 make all", ("Bash(taskset:*)",), "ask"),
    ("watch -n1 ls", ("Bash(ls:*)",), "allow"),
    ("parallel gzip ::: a b", ("Bash(gzip:*)",), "allow"),
    ("for f in *.py; do wc -l $f; done", ("Bash(wc:*)",), "allow"),
    ("f() { ls; }; f", ("Bash(ls:*)",), "ask"),
    ("f() { ls; }; f", ("Bash(ls:*)", "Bash(f)"), "allow"),
    ("A=1", ("Bash(ls:*)",), "ask"),
    ("find . -name '*.py'", ("Bash(find:*)",), "allow"),
    ("find . -exec rm {} +", ("Bash(find:*)",), "ask"),
    ("find . -exec rm {} +", ("Bash(find:*)", "Bash(rm:*)"), "allow"),
    ("npm run build && npm test", ("Bash(npm run build && npm test)",), "ask"),
]


@pytest.mark.parametrize(("command", "allow", "expect"), ALLOWS)
def test_allow_rules_cover_every_simple_command(
    command: str, allow: tuple[str, ...], expect: str
) -> None:
    decision = decide(command, allow=allow)
    assert decision.behavior == expect, decision.reason


def test_allow_reason_names_every_rule_used() -> None:
    decision = decide("ls | grep x", allow=("Bash(grep:*)", "Bash(ls:*)", "Bash(pwd)"))
    assert decision.reason == "allowed by rules Bash(ls:*), Bash(grep:*)"
    single = decide("ls -l", allow=("Bash(pwd)", "Bash(ls:*)"))
    assert single.reason == "allowed by rule Bash(ls:*)"


@pytest.mark.parametrize(
    ("command", "rule", "matches"),
    [
        ("git push origin", "Bash(git push:*)", True),
        ("git $SUB origin", "Bash(git push:*)", True),
        ("git pu?h origin", "Bash(git push:*)", True),
        ("git pull", "Bash(git push:*)", False),
        ("rm -rf /", "Bash(rm -rf /)", True),
        ("rm -rf / $EMPTY", "Bash(rm -rf /)", True),
        ("rm -rf / x", "Bash(rm -rf /)", False),
        ("sudo rm x", "Bash(sudo:*)", True),
        ("sudo -u root rm x", "Bash(sudo -u root:*)", True),
        ("npm run build && npm test", "Bash(npm run build && npm test)", True),
        ("npm run build; npm test", "Bash(npm run build && npm test)", False),
    ],
)
def test_deny_rule_words(command: str, rule: str, matches: bool) -> None:
    """A word bash expands may become the rule's words; a literal rule keeps its text."""
    decision = decide(command, allow=("Bash",), deny=(rule,), mode="bypassPermissions")
    assert (decision.behavior == "deny") is matches, decision.reason


@pytest.mark.parametrize(
    "command",
    [
        "echo hi > out.txt",
        "cat < in.txt",
        "echo `date`",
        "echo $(date)",
        "a >> b 2>&1 < c",
        "a <<< c",
    ],
)
def test_redirections_and_substitutions_never_raise(command: str) -> None:
    """A rule with content on a line with ``>``, ``<``, a backtick or ``$(``: a decision."""
    assert decide(command, deny=("Bash(rm:*)",)).behavior == "ask"
    assert decide(command, deny=("Bash(rm:*)",), mode="bypassPermissions").behavior == "allow"


def _nested(command: str, depth: int) -> str:
    for _ in range(depth):
        command = "bash -c " + shlex.quote(command)
    return command


@pytest.mark.parametrize("depth", [MAX_SHELL_DEPTH, MAX_SHELL_DEPTH + 1])
def test_shell_bodies_nest_to_the_limit(depth: int) -> None:
    """``bash -c`` bodies are followed :data:`MAX_SHELL_DEPTH` deep; one more fails closed."""
    line = parse_command_line(_nested("ls", depth))
    assert isinstance(line, CommandLine) is (depth == MAX_SHELL_DEPTH)
    allowed = decide(_nested("ls", depth), allow=("Bash(ls:*)",)).behavior
    assert allowed == ("allow" if depth == MAX_SHELL_DEPTH else "ask")
    assert denied_curl(_nested("curl x", depth)) == "deny"


@pytest.mark.parametrize("levels", [MAX_SHELL_DEPTH, MAX_SHELL_DEPTH + 1])
def test_find_commands_nest_to_the_limit(levels: int) -> None:
    """``find -exec find -exec ...``: :data:`MAX_SHELL_DEPTH` levels; one more fails closed."""
    nested = "find . " + "-exec find " * (levels - 1)
    line = parse_command_line(nested + "-exec ls \\;")
    assert isinstance(line, CommandLine) is (levels == MAX_SHELL_DEPTH)
    assert denied_curl(nested + "-exec curl \\;") == "deny"


@pytest.mark.parametrize(
    "command",
    [
        "echo " + "$(" * 20_000 + "curl" + ")" * 20_000,
        "(" * 20_001 + "curl" + ")" * 20_001,
        "echo " + "`" * 20_000,
        "ls; " * 20_000 + "curl",
        "echo " + '"$(' * 5_000 + "curl" + ')"' * 5_000,
    ],
    ids=["substitutions", "subshells", "backticks", "list", "quoted-substitutions"],
)
def test_deep_and_long_lines_decide(command: str) -> None:
    """No depth of nesting reaches Python's recursion limit: every line gets a decision."""
    assert denied_curl(command) in ("deny", "allow")
    assert decide(command, allow=("Bash(ls:*)",)).behavior == "ask"


# --- properties -----------------------------------------------------------------

ALLOWED_RULES = ("Bash(ls:*)", "Bash(grep:*)", "Bash(echo:*)", "Bash(git status:*)")

_WRAPPERS = st.sampled_from(
    [
        "env ",
        "env -i A=b ",
        "env -u X -- ",
        "command ",
        "command -p ",
        "exec ",
        "nohup ",
        "time ",
        "time -p ",
        "nice ",
        "nice -n 5 ",
        "nice -5 ",
        "timeout 5 ",
        "timeout -k 1 -s KILL 5s ",
        "xargs ",
        "xargs -0 -n 1 ",
        "sudo ",
        "sudo -u x -E ",
        "sudo -- ",
    ]
)
_ASSIGNMENTS = st.sampled_from(["", "X=1 ", "A=$(echo) B='x y' "])
_ARGS = st.lists(st.sampled_from(["-s", "x", "'a b'", '"$HOME"', "$X", "-o out", "*.py"]))


def _spellings(program: str) -> st.SearchStrategy[str]:
    return st.sampled_from(
        [
            program,
            f"/usr/bin/{program}",
            f"./{program}",
            f"\\{program}",
            f'"{program}"',
            f"'{program[0]}'{program[1:]}",
            f'{program[0]}""{program[1:]}',
            f"{program[0]}\\{program[1:]}",
        ]
    )


@st.composite
def _simple(draw: st.DrawFn, program: str) -> str:
    wrappers = draw(_ASSIGNMENTS) + "".join(draw(st.lists(_WRAPPERS, max_size=3)))
    words = " ".join(draw(_ARGS))
    rest = " status" if program == "git" else ""
    return f"{wrappers}{draw(_spellings(program))}{rest} {words}".rstrip()


_ALLOWED_SIMPLE = st.sampled_from(["ls", "grep", "echo", "git"]).flatmap(_simple)

#: Forms that put a command ``c`` in a context with another command ``o``.
Form = Callable[[str, str], str]

_FORMS: list[Form] = [
    lambda c, o: f"{o} | {c}",
    lambda c, o: f"{c} | {o}",
    lambda c, o: f"{o}; {c}",
    lambda c, o: f"{o} && {c}",
    lambda c, o: f"{o} || {c}",
    lambda c, o: f"{c} & {o}",
    lambda c, o: f"( {c} )",
    lambda c, o: f"{{ {c}; }}",
    lambda c, o: f"{o} $( {c} )",
    lambda c, o: f'{o} "$( {c} )"',
    lambda c, o: f"{o} <( {c} )",
    lambda c, o: f"{o} > >( {c} )",
    lambda c, o: f"bash -c {shlex.quote(c)}",
    lambda c, o: f"sh -ec {shlex.quote(c)}",
    lambda c, o: f"if {o}; then {c}; fi",
    lambda c, o: f"for i in 1 2; do {c}; done",
    lambda c, o: f"while {o}; do {c}; done",
    lambda c, o: f"X=$( {c} ) {o}",
    lambda c, o: f"[[ -n $( {c} ) ]] && {o}",
    lambda c, o: f"{o} 2>&1 > out.txt; {c} < in.txt",
]


def _backquoted(command: str) -> str:
    """``command`` as the body of a backquoted substitution."""
    return command.replace("\\", "\\\\").replace("`", "\\`")


#: Forms that the grammar can misread, where the matcher fails closed (a
#: newline then ``\\ls``: tree-sitter-bash folds both into one word).
_DENY_ONLY_FORMS: list[Form] = [
    lambda c, o: f"{o}\n{c}",
    lambda c, o: f"f() {{ {c}; }}; {o}",
    # Backquotes do not nest: an inner one is written \` (bash(1), "Command
    # Substitution"), or the inner command becomes a plain word.
    lambda c, o: f"{o} `{_backquoted(c)}`",
    lambda c, o: f"cat <<EOF\n$( {c} )\nEOF\n{o}",
    lambda c, o: f"trap {shlex.quote(c)} EXIT; {o}",
]


@st.composite
def _wrapped(draw: st.DrawFn, leaf: st.SearchStrategy[str], forms: list[Form]) -> str:
    command = draw(leaf)
    for form in draw(st.lists(st.sampled_from(forms), max_size=4)):
        command = form(command, draw(_ALLOWED_SIMPLE))
    return command


@settings(max_examples=300, deadline=None)
@given(_wrapped(_simple("curl"), [*_FORMS, *_DENY_ONLY_FORMS]))
def test_property_a_wrapped_denied_program_is_denied(command: str) -> None:
    """However curl is spelt, wrapped and placed, ``Bash(curl:*)`` denies it."""
    assert denied_curl(command) == "deny", command


@settings(max_examples=300, deadline=None)
@given(_wrapped(_ALLOWED_SIMPLE, _FORMS))
def test_property_allowed_programs_run(command: str) -> None:
    """A line built only from allowed programs is allowed by the rules together."""
    decision = decide(command, allow=ALLOWED_RULES)
    assert decision.behavior == "allow", (command, decision.reason)
    assert decide(command, allow=ALLOWED_RULES, deny=("Bash(curl:*)",)).behavior == "allow"


LAZY = """
import sys, time
from pathlib import PurePosixPath
from agentx.messages.permission_decisions import evaluate
from agentx.messages.permission_rules import PermissionRules

def check(allow):
    rules = PermissionRules.parse(allow=allow)
    args = dict(read_only=False, paths=(), rules=rules, mode="default", cwd=PurePosixPath("/"))
    return evaluate("Bash", {"command": "ls"}, **args).behavior

assert check(("Bash", "Read(**)")) == "allow"
before = "tree_sitter" in sys.modules
start = time.perf_counter()
assert check(("Bash(ls:*)",)) == "allow"
print(before, "tree_sitter" in sys.modules, time.perf_counter() - start)
"""


def test_the_grammar_loads_on_the_first_bash_rule_check() -> None:
    """Start-up and rules without Bash content never import the parser."""
    done = subprocess.run(
        [sys.executable, "-c", LAZY], capture_output=True, text=True, check=True, timeout=60
    )
    before, after, _ = done.stdout.split()
    assert (before, after) == ("False", "True")
