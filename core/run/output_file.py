"""``output: <file name>``: a step's final answer, also written to a file in its working folder.

This is what the pi-subagents format means by ``output`` (a chain's steps leave their results
as files the next ones, or a person, read). The agent file and the checkout may be hostile, so
the file must stay inside the step's working folder: the name was checked when the file was
read (:func:`core.definitions.agent_fields.output_file_problem`: no absolute path, no ``..``), and
here the
folder it lands in is resolved — a symlinked folder pointing elsewhere is refused. A symlink
at the file's own name is replaced, never followed: the write is atomic (temporary file, then
rename), so the link's target is left untouched.
"""

from __future__ import annotations

from pathlib import Path

from core.config.atomic import atomic_write_text
from core.definitions.agent_fields import output_file_problem


class OutputFileError(Exception):
    """The answer could not be written to its file; ``str()`` says why."""


def write_step_output(working_folder: Path, name: str, text: str) -> Path:
    """Write ``text`` to ``name`` inside ``working_folder`` atomically; the file's path."""
    problem = output_file_problem(name)
    if problem is not None:
        raise OutputFileError(problem)
    root = working_folder.resolve()
    target = root / name
    if not target.parent.resolve().is_relative_to(root):
        raise OutputFileError(f"'{name}' would be written outside the working folder")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.parent.resolve().is_relative_to(root):  # a link raced in
            raise OutputFileError(f"'{name}' would be written outside the working folder")
        if target.is_dir():
            raise OutputFileError(f"'{name}' is a folder")
        atomic_write_text(target, text if text.endswith("\n") or not text else text + "\n")
    except OSError as error:
        raise OutputFileError(f"cannot write '{name}': {error.strerror or error}") from None
    return target
