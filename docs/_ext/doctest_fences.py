"""A griffe extension for the API reference: the docstrings' doctest examples (``>>>`` lines
and the output under them) become fenced ``pycon`` code, instead of Markdown that reads
``[a, b]`` as a link and ``>>>`` as a quote. The docstrings stay plain doctests, which pytest
runs (``--doctest-modules``)."""

from __future__ import annotations

from typing import Any

import griffe


def fence(text: str) -> str:
    """Wrap each run of doctest lines (a ``>>>`` line, its ``...`` lines and its output up
    to a blank line) in a code fence, keeping its indentation."""
    out: list[str] = []
    in_example = False
    indent = ""
    for line in text.split("\n"):
        stripped = line.lstrip()
        if not in_example and stripped.startswith(">>>"):
            indent = line[: len(line) - len(stripped)]
            out.append(f"{indent}```pycon")
            in_example = True
        elif in_example and not stripped:
            out.append(f"{indent}```")
            in_example = False
        out.append(line)
    if in_example:
        out.append(f"{indent}```")
    return "\n".join(out)


class DoctestFences(griffe.Extension):
    """Fence the doctests of every object's docstring (modules, classes, functions)."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = fence(obj.docstring.value)
