"""The bash sandbox: generated command lines and profiles, and — where bubblewrap runs — what a
confined command can and cannot do (network switch, private /tmp, agent frontmatter)."""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.backends.tool_calls import confinement
from core.config.settings import Limits, SandboxSettings, Settings
from core.definitions.agents import AgentFileError, parse_agent_text
from core.safety import host_sockets, sandbox
from core.safety.sandbox import (
    SandboxStatus,
    bwrap_argv,
    confine,
    sandbox_status,
    seatbelt_profile,
)
from core.tools.base import ToolContext, ToolError
from core.tools.bash import BashParams, BashTool

needs_bwrap = pytest.mark.skipif(
    sandbox_status().kind != "bubblewrap", reason="bubblewrap does not run here"
)


def test_seatbelt_profile_allows_writes_only_in_the_working_and_temp_folders() -> None:
    profile = seatbelt_profile(
        cwd=Path("/Users/me/project"),
        temp=Path("/private/var/folders/x/baton-bash-1"),
        protected=[Path("/Users/me/Library/Application Support/baton")],
        network=True,
    )
    assert profile == (
        "(version 1)\n"
        "(allow default)\n"
        "(deny file-write*)\n"
        "(allow file-write*\n"
        '    (subpath "/Users/me/project")\n'
        '    (subpath "/private/var/folders/x/baton-bash-1")\n'
        '    (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty")\n'
        '    (literal "/dev/dtracehelper") (regex #"^/dev/fd/"))\n'
        "(deny file-read* file-write*\n"
        '    (subpath "/Users/me/Library/Application Support/baton"))\n'
    )


def test_seatbelt_profile_cuts_the_network_and_quotes_hostile_paths() -> None:
    profile = seatbelt_profile(
        cwd=Path('/tmp/a") (allow file-write* (subpath "/'),
        temp=None,
        protected=[],
        network=False,
    )
    assert profile.endswith("(deny network*)\n")
    assert '    (subpath "/tmp/a\\") (allow file-write* (subpath \\"")\n' in profile
    assert [line for line in profile.splitlines() if line.startswith("(allow")] == [
        "(allow default)",
        "(allow file-write*",
    ]


def test_confine_wraps_for_sandbox_exec_and_leaves_argv_alone_without_a_sandbox() -> None:
    argv = ["/bin/bash", "-c", "make"]
    wrapped = confine(
        SandboxStatus("sandbox-exec"),
        argv,
        cwd=Path("/w"),
        protected=[],
        network=True,
        temp=Path("/t"),
    )
    assert wrapped[:2] == ["sandbox-exec", "-p"] and wrapped[3:] == argv
    assert '(subpath "/t")' in wrapped[2]
    unconfined = confine(
        SandboxStatus("none", "x"), argv, cwd=Path("/w"), protected=[], network=True, temp=None
    )
    assert unconfined == argv


def test_bwrap_masks_batons_folders_after_binding_the_working_folder() -> None:
    argv = bwrap_argv(
        ["bash", "-c", "ls"],
        cwd=Path("/home/me"),
        protected=[Path("/home/me/.config/baton")],
        network=True,
    )
    text = " ".join(argv)
    assert "--ro-bind / /" in text and "--tmpfs /tmp" in text
    assert text.index("--bind /home/me /home/me") < text.index("--tmpfs /home/me/.config/baton")
    assert "--unshare-pid" in argv and "--die-with-parent" in argv
    assert "--unshare-net" not in argv
    assert "--unshare-net" in bwrap_argv(["true"], cwd=Path("/w"), protected=[], network=False)
    assert argv[-4:] == ["--", "bash", "-c", "ls"]


def test_switched_off_in_settings_says_not_sandboxed() -> None:
    status = sandbox_status(enabled=False)
    assert not status.active
    assert status.describe() == "not sandboxed: the sandbox is turned off in Settings"


@pytest.fixture
def fresh_probe() -> Iterator[None]:
    sandbox._platform_sandbox.cache_clear()
    yield
    sandbox._platform_sandbox.cache_clear()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap is Linux-only")
def test_missing_bwrap_is_reported_as_not_sandboxed(
    fresh_probe: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)  # how the probe looks for bwrap
    assert sandbox_status().describe() == "not sandboxed: bubblewrap (bwrap) is not installed"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap is Linux-only")
def test_bwrap_refused_by_the_kernel_is_reported_with_its_reason(
    fresh_probe: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    status = sandbox_status()
    assert status.describe() == (
        "not sandboxed: bubblewrap was refused by the system "
        "(bwrap: No permissions to creating new namespace)"
    )


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP port on 127.0.0.1 that accepts connections (the network a command might reach)."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield server.getsockname()[1]


async def bash(work: Path, command: str, *, network: bool = True) -> str:
    ctx = ToolContext(cwd=work, limits=Limits(), sandbox=SandboxSettings(network=network))
    try:
        return await BashTool().run(BashParams(command=command, timeout=30), ctx)
    except ToolError as error:
        return str(error)


@needs_bwrap
async def test_network_is_on_by_default_and_cut_by_the_switch(work: Path, listener: int) -> None:
    connect = f"exec 3<>/dev/tcp/127.0.0.1/{listener} && echo connected"
    assert "connected" in await bash(work, connect)
    cut = await bash(work, connect, network=False)
    assert "connected" not in cut and "failed with exit code" in cut


@needs_bwrap
async def test_tmp_is_private_and_the_working_folder_writable(work: Path, tmp_path: Path) -> None:
    probe = Path("/tmp") / f"{tmp_path.name}-probe"
    result = await bash(work, f"echo x > {probe} && echo ok > out.txt")
    assert result.endswith("Exit code 0")
    assert not probe.exists()
    assert (work / "out.txt").read_text() == "ok\n"


AGENT = "---\nname: a\ndescription: d\n{extra}---\nbody\n"


def test_agent_frontmatter_cuts_the_network_and_lists_allowed_secrets() -> None:
    agent = parse_agent_text(AGENT.format(extra="sandbox: {network: false}\nenv: [GITHUB_TOKEN]\n"))
    assert agent.network is False and agent.env == ("GITHUB_TOKEN",)
    plain = parse_agent_text(AGENT.format(extra=""))
    assert plain.network is True and plain.env == ()


@pytest.mark.parametrize(
    "extra", ["sandbox: off\n", "sandbox: {network: maybe}\n", "env: {GITHUB_TOKEN: 1}\n"]
)
def test_malformed_confinement_fields_are_diagnosed(extra: str) -> None:
    with pytest.raises(AgentFileError, match=r"'sandbox' must|'env' must"):
        parse_agent_text(AGENT.format(extra=extra))


def test_tool_context_combines_the_run_switch_and_the_agent(tmp_path: Path) -> None:
    from core.backends.base import StepContext
    from core.safety.approvals import ApprovalGate, deny_all

    def fields(network_setting: bool, extra: str) -> dict[str, object]:
        agent = parse_agent_text(AGENT.format(extra=extra))
        settings = Settings(sandbox=SandboxSettings(network=network_setting))
        gate = ApprovalGate(settings.effective_policy(), deny_all, lambda e: None, lambda: 0.0)
        ctx = StepContext("r", 0, agent, "t", tmp_path, None, (), settings, gate)
        return confinement(ctx)

    assert fields(True, "")["sandbox"] == SandboxSettings(network=True)
    assert fields(False, "")["sandbox"] == SandboxSettings(network=False)
    assert fields(True, "sandbox: {network: false}\n")["sandbox"] == SandboxSettings(network=False)
    assert fields(True, "env: [GITHUB_TOKEN]\n")["env_allow"] == ("GITHUB_TOKEN",)


def _socket_places() -> list[Path]:
    """Where host services put the sockets that would be a way out: the system and user runtime
    folders, /var/tmp, and a folder in the home (the gpg agent's, Docker Desktop's)."""
    runtime = Path(os.environ.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid()}")
    return [Path("/run"), Path("/var/run"), runtime, Path("/var/tmp"), Path.home()]


@pytest.fixture(params=_socket_places(), ids=lambda place: str(place))
def host_socket(request: pytest.FixtureRequest) -> Iterator[Path]:
    """A real AF_UNIX listener in one socket place, outside the working folder and /tmp."""
    place: Path = request.param
    made = not place.exists()  # a runtime folder nobody logged in to has not made yet
    try:
        place.mkdir(parents=True, exist_ok=True)
        folder = Path(tempfile.mkdtemp(prefix=".baton-socket-test-", dir=place))
    except OSError as error:
        pytest.skip(f"cannot place a listener in {place}: {error}")
    path = folder / "agent.sock"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(path))
        server.listen(8)
        yield path
    finally:
        server.close()
        shutil.rmtree(place if made else folder, ignore_errors=True)


def _connect_command(address: str) -> str:
    script = (
        "import socket,sys\n"
        "a=sys.argv[1]\n"
        "a='\\0'+a[1:] if a.startswith('@') else a\n"  # '@name': an abstract socket
        "s=socket.socket(socket.AF_UNIX)\n"
        "try:\n s.connect(a); print('REACHED')\n"
        "except OSError as e: print('refused', e)\n"
    )
    # The real interpreter (the script needs only the standard library): a venv reached
    # through /tmp (a clone there) is out of the sandbox's sight, whose /tmp is its own.
    python = os.path.realpath(sys.executable)
    return f"{shlex.quote(python)} -c {shlex.quote(script)} {shlex.quote(address)}"


@needs_bwrap
@pytest.mark.parametrize("network", [True, False], ids=["network", "no-network"])
async def test_the_hosts_unix_sockets_cannot_be_reached(
    work: Path, host_socket: Path, network: bool
) -> None:
    outside = _connect_command(str(host_socket))
    with socket.socket(socket.AF_UNIX) as probe:
        probe.connect(str(host_socket))  # the listener is real: reachable from outside
    result = await bash(work, outside, network=network)
    assert "refused" in result and "REACHED" not in result


@needs_bwrap
async def test_abstract_sockets_are_cut_with_the_network(work: Path) -> None:
    name = f"\0baton-test-{os.getpid()}-{work.name}"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(name)
        server.listen(8)
        command = _connect_command("@" + name[1:])
        assert "REACHED" in await bash(work, command)  # the documented limit with network on
        cut = await bash(work, command, network=False)
    assert "refused" in cut and "REACHED" not in cut


@needs_bwrap
async def test_name_resolution_settings_stay_readable(work: Path) -> None:
    assert "Exit code 0" in await bash(work, "cat /etc/resolv.conf > /dev/null")


def test_only_live_path_sockets_from_the_table_are_covered(tmp_path: Path) -> None:
    """A deleted socket stays listed in /proc/net/unix; covering it would make bwrap fail."""
    live = tmp_path / "live.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(live))
        table = tmp_path / "unix"
        table.write_text(
            "Num RefCount Protocol Flags Type St Inode Path\n"
            f"0000: 00000002 00000000 00010000 0001 01 1 {live}\n"
            f"0000: 00000002 00000000 00010000 0001 01 2 {tmp_path / 'gone.sock'}\n"
            "0000: 00000002 00000000 00010000 0001 01 3 @abstract\n"
            "0000: 00000002 00000000 00010000 0001 01 4\n"
        )
        assert host_sockets.host_socket_paths(table) == [str(live.resolve())]


@needs_bwrap
async def test_a_socket_that_vanishes_as_bash_starts_does_not_fail_the_command(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The host's sockets are listed just before bwrap starts; one removed in between made
    bwrap fail to cover it. The command is started again with a fresh list."""
    listed = host_sockets.host_socket_paths
    gone = [f"/.baton-vanished-{work.name}.sock", f"/.baton-vanished-{work.name}/gone.sock"]
    calls: list[int] = []

    def vanishing(table: Path = host_sockets.PROC_NET_UNIX) -> list[str]:
        calls.append(1)
        return [*listed(table), *(gone[len(calls) - 1 : len(calls)])]

    monkeypatch.setattr(host_sockets, "host_socket_paths", vanishing)
    result = await bash(work, "echo ran")
    assert result == "ran\n\nExit code 0"
    assert len(calls) == 3  # a vanished socket, a vanished folder, then a clean start
