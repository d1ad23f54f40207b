"""Discovery + parsing of 1,000 generated agent files (issue: target ≤ 0.3 s).

Generates a realistic mix in a temporary user folder — most files clean, some with lenient
YAML (an unquoted ': '), some READMEs without frontmatter, some broken — then times
``discover_agents`` over several rounds. Then the GUI's refresh after a file changed on disk:
the same discovery with a warm :class:`~core.definitions.cache.ParseCache` (the files dated an
hour back, as files written before the app reads them are), one file rewritten before each
round. Prints the medians and, as its last line, a JSON object with ``files``, ``seconds`` and
``refresh_seconds``.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from pathlib import Path

FILES = 1_000
ROUNDS = 7
BODY = "You are a careful engineer.\n\n" + "Follow the plan; report what changed.\n" * 40


def generate(folder: Path) -> None:
    folder.mkdir(parents=True)
    for i in range(FILES):
        if i % 50 == 0:
            text = f"# Notes {i}\n\nNot an agent.\n"
        elif i % 40 == 0:
            text = f"---\nname: lenient-{i}\ndescription: Reviews code: finds bugs\n---\n{BODY}"
        elif i % 97 == 0:
            text = f"---\nname: broken-{i}\n---\n{BODY}"
        else:
            text = (
                f"---\nname: agent-{i}\ndescription: Agent number {i} does one job well\n"
                f"tools: Read, Grep, Glob, Bash\nmodel: claude-sonnet-4-5\n---\n{BODY}"
            )
        (folder / f"agent-{i:04}.md").write_text(text, encoding="utf-8")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["BATON_CONFIG_DIR"] = str(root / "config")
        os.environ["HOME"] = str(root / "home")
        from core.definitions.agents import discover_agents

        generate(root / "config" / "agents")
        times = []
        for _ in range(ROUNDS):
            start = time.perf_counter()
            catalog = discover_agents(root, "user")
            times.append(time.perf_counter() - start)
        median = statistics.median(times)
        print(
            f"{len(catalog.agents)} agents, {len(catalog.diagnostics)} diagnostics; "
            f"median of {ROUNDS}: {median * 1000:.1f} ms (min {min(times) * 1000:.1f} ms)"
        )
        refresh = statistics.median(refresh_rounds(root))
        print(f"refresh after one file changed, median of {ROUNDS}: {refresh * 1000:.1f} ms")
        print(
            json.dumps(
                {"files": FILES, "seconds": round(median, 4), "refresh_seconds": round(refresh, 4)}
            )
        )


def refresh_rounds(root: Path) -> list[float]:
    from core.definitions.agents import AgentDefinition, AgentFileError, discover_agents
    from core.definitions.cache import ParseCache

    folder = root / "config" / "agents"
    an_hour_ago = time.time() - 3_600
    for file in folder.iterdir():
        os.utime(file, (an_hour_ago, an_hour_ago))
    cache: ParseCache[AgentDefinition] = ParseCache((AgentFileError,))
    discover_agents(root, "user", cache)
    times = []
    for round_number in range(ROUNDS):
        changed = folder / "agent-0001.md"
        changed.write_text(
            f"---\nname: agent-1\ndescription: Edited {round_number}\n---\n{BODY}", "utf-8"
        )
        start = time.perf_counter()
        discover_agents(root, "user", cache)
        times.append(time.perf_counter() - start)
    return times


if __name__ == "__main__":
    main()
