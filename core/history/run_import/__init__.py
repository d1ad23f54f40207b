"""Bringing runs made elsewhere into Baton: ``baton runs import FILE``, ``baton open FILE`` and
the window's "Open…" read files through this package, and nothing else parses saved files.

One job a module:

* :mod:`~core.history.run_import.history` — a Baton run file or a transcript saved into the history
  (redacted, written, indexed);
* :mod:`~core.history.run_import.formats` — which transcript format a file is in, and wrapping its
  one
  step into a complete run with a new id;
* :mod:`~core.history.run_import.step` — :class:`StepTranscript`, what every format's reader
  returns;
* :mod:`~core.history.run_import.pi` and :mod:`~core.history.run_import.claude` — one reader per
  agent CLI
  (the live backends' parsers do the event mapping, so a saved run and a live one agree).
"""

from core.history.run_import.formats import import_transcript
from core.history.run_import.history import import_run, load_any

__all__ = ["import_run", "import_transcript", "load_any"]
