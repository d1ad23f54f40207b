"""Reading the YAML of agent and preset files without letting a file blow up.

YAML aliases let a few hundred bytes stand for billions of values (``a: &a [x, x, …]``,
``b: &b [*a, *a, …]`` … the "billion laughs"). PyYAML builds such a document quickly, with
shared lists, but everything that walks it afterwards (validation, ``str()``, the editor) takes
forever and the memory grows without end. Definitions are written by hand and never need more
than a handful of values, so :func:`load_definition_yaml` first walks the parser's events,
counting every value as it would be expanded (an alias counts as everything its anchor holds),
and refuses the file with :class:`DefinitionYAMLError` once the count passes
:data:`MAX_YAML_VALUES`. The walk is linear in the size of the text, so the refusal is instant.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

#: libyaml's safe loader (about 10x faster) where PyYAML was built with it.
FAST_SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MAX_YAML_VALUES = 10_000
"""More values (aliases expanded) than any real agent or preset file holds."""


class DefinitionYAMLError(ValueError):
    """The text is not YAML Baton will read; ``line`` is 1-based within the text."""

    def __init__(self, reason: str, line: int | None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line


def _line(mark: Any) -> int | None:
    return None if mark is None else int(mark.line) + 1


def _count_values(text: str, limit: int) -> None:
    """Raise when ``text``, aliases expanded, holds more than ``limit`` values."""
    sizes: dict[str, int] = {}
    open_nodes: list[list[Any]] = []  # [anchor, values so far] per open sequence/mapping

    def add(count: int, anchor: str | None, mark: Any) -> None:
        if anchor:
            sizes[anchor] = count
        if open_nodes:
            open_nodes[-1][1] += count
        if count > limit or (open_nodes and open_nodes[-1][1] > limit):
            raise DefinitionYAMLError(
                f"aliases expand to more than {limit:,} values; write the values out instead "
                "of repeating anchors (*name)",
                _line(mark),
            )

    for event in yaml.parse(text, Loader=FAST_SAFE_LOADER):
        if isinstance(event, yaml.ScalarEvent):
            add(1, event.anchor, event.start_mark)
        elif isinstance(event, yaml.AliasEvent):
            add(sizes.get(event.anchor or "", 1), None, event.start_mark)
        elif isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent):
            open_nodes.append([event.anchor, 1])
        elif isinstance(event, yaml.SequenceEndEvent | yaml.MappingEndEvent):
            anchor, count = open_nodes.pop()
            add(count, anchor, event.start_mark)


def load_definition_yaml(text: str, limit: int = MAX_YAML_VALUES) -> Any:
    """The one YAML document in ``text`` (safe types only), or :class:`DefinitionYAMLError`
    with the reason and line: invalid YAML, or aliases that expand past ``limit`` values."""
    try:
        _count_values(text, limit)
        return yaml.load(text, Loader=FAST_SAFE_LOADER)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
        reason = getattr(error, "problem", None) or str(error).split("\n")[0]
        raise DefinitionYAMLError(str(reason), _line(mark)) from None


def key_line(text: str, key: str | None) -> int | None:
    """The 1-based line of ``text`` where the top-level ``key:`` is written, if it is."""
    if key is None:
        return None
    pattern = re.compile(rf"['\"]?{re.escape(key)}['\"]?\s*:")
    for number, line in enumerate(text.split("\n"), start=1):
        if pattern.match(line):
            return number
    return None
