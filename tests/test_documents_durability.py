"""Real processes against one store file: a writer killed with SIGKILL mid-way loses nothing it
acknowledged and leaves a file that passes ``PRAGMA integrity_check``; writers in two processes
at once both land every write (WAL + busy timeout)."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

from core.documents.store import DocumentStore

WRITER = r"""
import sys
from pathlib import Path
from core.documents.store import DocumentStore, NewDocument

def ack(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()

store = DocumentStore(Path(sys.argv[1]))
label, limit = sys.argv[2], int(sys.argv[3])
body = "登录 login 内容 content " * 150
i = 0
while limit == 0 or i < limit:
    # A write is acknowledged by printing after it returned, i.e. after COMMIT.
    doc = store.create(f"{label} {i}", body, tags=["durable", label])
    ack(f"created {doc.id}")
    doc = store.update(doc.id, content=body + str(i))
    ack(f"updated {doc.id} {doc.version}")
    for new_id in store.create_many(
        NewDocument(title=f"{label} batch {i}.{j}", content=body, tags=["durable", label])
        for j in range(10)
    ):
        ack(f"created {new_id}")
    i += 1
store.close()
"""


def start_writer(path: Path, label: str, limit: int = 0) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), label, str(limit)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def check_file(path: Path) -> sqlite3.Connection:
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert raw.execute("PRAGMA foreign_key_check").fetchall() == []
    return raw


def kill_after(path: Path, label: str, acknowledgements: int) -> list[str]:
    """Run a writer until it has acknowledged that many writes, SIGKILL it, and return every
    line it printed: all of them were acknowledged (printed after their COMMIT)."""
    writer = start_writer(path, label)
    assert writer.stdout is not None
    lines: list[str] = []
    while len(lines) < acknowledgements:
        line = writer.stdout.readline()
        assert line, writer.stderr.read() if writer.stderr else "the writer ended"
        lines.append(line)
    writer.kill()  # SIGKILL: no cleanup, no atexit, most likely inside a transaction
    rest, errors = writer.communicate()
    assert errors == ""
    if sys.platform != "win32":
        assert writer.returncode == -signal.SIGKILL
    # A line cut short by the kill was never a whole acknowledgement.
    return [line for line in lines + rest.splitlines(keepends=True) if line.endswith("\n")]


def test_a_killed_writer_loses_nothing_it_acknowledged(tmp_path: Path) -> None:
    path = tmp_path / "documents.sqlite"
    acknowledged: list[str] = []
    for round_ in range(3):  # a different point in the write loop each round
        acknowledged += kill_after(path, f"round{round_}", 40 + 27 * round_)
        check_file(path).close()
    with DocumentStore(path) as store:
        stored = {doc.id: doc.version for doc in store.export()}
        for line in acknowledged:
            kind, *numbers = line.split()
            assert int(numbers[0]) in stored, line
            if kind == "updated":
                assert stored[int(numbers[0])] >= int(numbers[1]), line
        connection = store._db.connection()
        for table in ("documents_tri", "documents_seg"):
            connection.execute(f"INSERT INTO {table}({table}) VALUES ('integrity-check')")
        # The indexes hold exactly the committed documents: nothing half-indexed.
        assert store.search("登录").total == len(stored)
        assert store.search("content").total == len(stored)
        assert store.list(tag="durable").total == len(stored)
        store.create("after recovery", "still writable")


def test_two_writer_processes_at_once(tmp_path: Path) -> None:
    path = tmp_path / "documents.sqlite"
    DocumentStore(path).close()  # created and migrated before they race
    writers = [start_writer(path, name, limit=4) for name in ("a", "b")]
    outputs = [writer.communicate() for writer in writers]
    assert [writer.returncode for writer in writers] == [0, 0], outputs
    with DocumentStore(path) as store:
        assert store.list(tag="a").total == 4 * 11
        assert store.list(tag="b").total == 4 * 11
    check_file(path).close()
