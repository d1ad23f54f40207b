"""core.tools.process_tree: the one way Baton ends a child with everything it started."""

from __future__ import annotations

import asyncio
import os
import sys

import psutil
import pytest

from core.tools import process_tree
from core.tools.process_tree import ProcessTree, alive, become_subreaper, new_tag, stop_tree

posix_only = pytest.mark.skipif(os.name != "posix", reason="shell job control")


@posix_only
async def test_stop_tree_ends_the_child_its_grandchildren_and_a_setsid_escapee() -> None:
    proc = await asyncio.create_subprocess_exec(
        "sh",
        "-c",
        "sleep 60 & setsid sleep 61 & echo $! ; wait",
        stdout=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    escapee = int(await proc.stdout.readline())
    children = [p.pid for p in psutil.Process(proc.pid).children(recursive=True)]
    assert escapee in children and len(children) == 2
    await stop_tree(proc, grace=2)
    assert proc.returncode is not None
    assert not any(alive(pid) for pid in children)


@posix_only
async def test_sigterm_ignoring_processes_are_killed_after_the_grace() -> None:
    proc = await asyncio.create_subprocess_exec(
        "sh",
        "-c",
        "trap '' TERM; echo ready; while :; do sleep 600; done",  # TERM ends only its sleep
        stdout=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    await proc.stdout.readline()
    await stop_tree(proc, grace=0.2)
    assert proc.returncode == -9


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER")
async def test_as_subreaper_orphans_stay_batons_children_and_tagged_ones_are_found() -> None:
    assert become_subreaper()
    tag = new_tag()
    env = {**os.environ, process_tree.TAG_VARIABLE: tag}
    launcher = await asyncio.create_subprocess_exec(
        "sh",
        "-c",
        "setsid sleep 62 > /dev/null 2>&1 & echo $!",
        stdout=asyncio.subprocess.PIPE,
        env=env,
    )
    tree = ProcessTree(launcher.pid, tag)
    out, _ = await launcher.communicate()
    orphan = int(out)
    assert psutil.Process(orphan).ppid() == os.getpid()  # re-parented to Baton, not init
    assert [p.pid for p in tree.members()] == [orphan]
    await tree.stop(launcher, grace=2)
    assert not alive(orphan)
    with pytest.raises(psutil.NoSuchProcess):
        psutil.Process(orphan).status()  # reaped, not left a zombie
