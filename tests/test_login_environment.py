"""The login shell's environment, read as a desktop-started Baton reads it: a real bash with a
profile in a temporary home. A profile that is slow, fails or prints nonsense is an error
value, never a hang, and a slow one is killed with everything it started."""

from __future__ import annotations

import os
from pathlib import Path

import psutil
import pytest

from core.config.login_environment import (
    MARKER,
    LoginShellError,
    apply,
    merge,
    parse_environment,
    read_login_environment,
    started_from_terminal,
)
from core.config.program_locations import locate_program

BASH = "/bin/bash"


def _profile(home: Path, text: str) -> None:
    (home / ".bash_profile").write_text(text, encoding="utf-8")


def test_the_profile_path_and_variables_come_back(isolated_home: Path) -> None:
    _profile(
        isolated_home,
        'echo "welcome back"\nexport PATH="$HOME/tools/bin:$PATH"\nexport NVM_DIR="$HOME/.nvm"\n',
    )
    environment = read_login_environment(BASH, timeout_s=60)
    assert environment["PATH"].split(":")[0] == f"{isolated_home}/tools/bin"
    assert environment["NVM_DIR"] == f"{isolated_home}/.nvm"


def test_a_slow_profile_is_killed_with_its_children(isolated_home: Path) -> None:
    pids = isolated_home / "pids"
    _profile(
        isolated_home,
        f'echo $$ > "{pids}"\n'
        f'sleep 300 & echo $! >> "{pids}"\n'
        f'sleep 301 & echo $! >> "{pids}"\n'
        "wait\n",
    )
    with pytest.raises(LoginShellError, match="did not answer within 1 s"):
        read_login_environment(BASH, timeout_s=1)
    started = [int(pid) for pid in pids.read_text().split()]
    assert len(started) == 3  # the shell and both of its sleeps
    processes = []
    for pid in started:
        try:
            processes.append(psutil.Process(pid))
        except psutil.NoSuchProcess:
            continue
    _gone, alive = psutil.wait_procs(processes, timeout=10)
    assert not alive, "the profile's processes outlived the timeout"


@pytest.mark.parametrize(
    ("profile", "problem"),
    [("exit 1\n", "exited with status 1"), ("exec cat /dev/null\n", "exited|no environment")],
)
def test_a_failing_profile_is_an_error(isolated_home: Path, profile: str, problem: str) -> None:
    _profile(isolated_home, profile)
    with pytest.raises(LoginShellError, match=problem):
        read_login_environment(BASH, timeout_s=60)


def test_a_shell_printing_garbage_is_an_error(tmp_path: Path) -> None:
    shell = tmp_path / "garbage-shell"
    shell.write_text("#!/bin/sh\nhead -c 20000 /dev/urandom\nprintf 'PATH=/evil\\0'\n")
    shell.chmod(0o755)
    with pytest.raises(LoginShellError, match="no environment"):
        read_login_environment(str(shell), timeout_s=60)


def test_a_missing_shell_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(LoginShellError, match="cannot start"):
        read_login_environment(str(tmp_path / "no-such-shell"), timeout_s=5)


def test_output_before_the_marker_and_odd_entries_are_ignored() -> None:
    output = (
        b"PATH=/fake\0motd\0" + MARKER.encode() + b"\0PATH=/a:/b\0X=1=2\0no equals\0 bad=1\0"
        b"\xff\xfe=binary\0"
    )
    assert parse_environment(output) == {"PATH": "/a:/b", "X": "1=2"}


def test_merge_puts_the_login_folders_first_and_keeps_what_we_have() -> None:
    current = {"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": "/opt/baton", "HOME": "/h"}
    login = {
        "PATH": "/h/.nvm/bin:/usr/bin",
        "LD_LIBRARY_PATH": "/elsewhere",
        "NVM_DIR": "/h/.nvm",
        "SHLVL": "2",
        "PWD": "/h",
    }
    change = merge(current, login)
    assert change.path == "/h/.nvm/bin:/usr/bin:/bin"
    assert change.path_folders == ("/h/.nvm/bin",)
    assert change.added == {"NVM_DIR": "/h/.nvm"}  # ours win; the shell's own state is left
    assert merge(current, {"PATH": "/bin"}).path is None


def test_a_program_on_the_login_path_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "tools"
    folder.mkdir()
    program = folder / "pi"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    environ = {"PATH": "/usr/bin:/bin"}
    apply(merge(environ, {"PATH": f"{folder}:/usr/bin"}), environ)
    assert environ["PATH"] == f"{folder}:/usr/bin:/bin"
    import shutil

    found = locate_program("pi", which=lambda name: shutil.which(name, path=environ["PATH"]))
    assert found is not None and found.path == str(program)
    assert found.describe() == f"{program} (on your login shell's PATH)"


def test_the_override_decides_whether_a_terminal_started_us() -> None:
    assert started_from_terminal({"BATON_LOGIN_SHELL": "0"})
    assert not started_from_terminal({"BATON_LOGIN_SHELL": "1"})
    assert started_from_terminal({}) == any(os.isatty(fd) for fd in (0, 1, 2))


def test_the_shell_never_starts_in_the_checkout(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A profile hook that reads the current folder (direnv's .envrc, nvm's .nvmrc, a prompt
    sourcing .env) must not run what a hostile checkout put there."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / ".envrc").write_text(f"touch {tmp_path / 'pwned'}\n", encoding="utf-8")
    _profile(isolated_home, '[ -f .envrc ] && . ./.envrc\nexport STARTED_IN="$PWD"\n')
    monkeypatch.chdir(checkout)
    environment = read_login_environment(BASH, timeout_s=60)
    assert environment["STARTED_IN"] == str(isolated_home)
    assert not (tmp_path / "pwned").exists()
