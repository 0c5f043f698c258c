"""The documentation's examples run as written (issue 25).

Every ```` ```python ```` block in ``docs/**/*.md`` and ``README.md`` runs, the blocks of one
page in order in one namespace (a page reads like a notebook). A block that cannot run
offline (a cluster, a paid API) says so on the line before it, with the reason:
``<!-- docs-test: skip, needs a Ray cluster -->``. A ```` ```text ```` block right after a
Python block is the output it prints, compared exactly.

Shell examples mostly read data sets or start servers, so every ``budgetctx`` command line in
them must name a real command and only options that command has; a shell block marked
``<!-- docs-test: run -->`` is also run, each ``budgetctx`` line through the CLI, in a folder
that holds ``note.txt`` (the bundled sample note), and must exit 0.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest
import typer

try:  # typer >= 0.24 vendors its own click (groups are commands with list_commands)
    from typer._click import Command, Context
except ImportError:  # pragma: no cover - older typer on the real click
    from click import Command, Context  # type: ignore[assignment]

from budgetctx.cli import app

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted(
    [ROOT / "README.md", *(p for p in (ROOT / "docs").rglob("*.md") if "_ext" not in p.parts)]
)
SKIP = re.compile(r"<!-- docs-test: skip, (?P<reason>[^>]+?) -->\n$")
RUN = "<!-- docs-test: run -->\n"
FENCE = re.compile(r"^```(?P<lang>[a-z]*)\n(?P<body>.*?)^```$", re.DOTALL | re.MULTILINE)


def _blocks(page: Path) -> list[tuple[str, str, str | None, str | None]]:
    """``(lang, body, skip reason, output)`` for every fenced block of ``page``."""
    text = page.read_text(encoding="utf-8")
    found = list(FENCE.finditer(text))
    out = []
    for i, m in enumerate(found):
        before = text[: m.start()]
        skip = SKIP.search(before[-200:])
        if m["lang"] == "sh" and before.endswith(RUN):
            skip = None
            output = "run"
            out.append((m["lang"], m["body"], skip, output))
            continue
        output = None
        if m["lang"] == "python" and i + 1 < len(found):
            nxt = found[i + 1]
            if nxt["lang"] == "text" and not text[m.end() : nxt.start()].strip():
                output = nxt["body"]
        out.append((m["lang"], m["body"], skip["reason"] if skip else None, output))
    return out


def _name(page: Path) -> str:
    return str(page.relative_to(ROOT))


# Pages with a Python example that runs here (a page whose only examples need a cluster or
# a paid API is still checked for its skip markers and its command lines).
PYTHON_PAGES = [
    p for p in PAGES if any(lang == "python" and not skip for lang, _, skip, _ in _blocks(p))
]


def test_the_docs_have_examples_and_skips_say_why() -> None:
    assert len(PYTHON_PAGES) >= 4, [_name(p) for p in PYTHON_PAGES]
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        # A skip marker must sit right on a python block and give its reason.
        for marker in re.finditer(r"(?m)^<!-- docs-test:[^\n]*", text):
            if marker[0] + "\n" == RUN:
                assert text[marker.end() :].startswith("\n```sh"), f"{_name(page)}: {marker[0]}"
                continue
            assert SKIP.match(marker[0] + "\n"), f"{_name(page)}: malformed {marker[0]!r}"
            assert text[marker.end() :].startswith("\n```python"), f"{_name(page)}: {marker[0]}"


@pytest.mark.parametrize("page", PYTHON_PAGES, ids=_name)
def test_python_examples_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # an example that writes a file writes it here
    namespace: dict[str, object] = {"__name__": "__docs__"}
    for index, (lang, body, skip, output) in enumerate(_blocks(page)):
        if lang != "python" or skip is not None:
            continue
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(body, f"{_name(page)} block {index}", "exec"), namespace)
        if output is not None:
            assert printed.getvalue() == output, f"{_name(page)} block {index} printed otherwise"


def _command_lines(page: Path) -> list[str]:
    lines = []
    for lang, body, _, _ in _blocks(page):
        if lang not in ("sh", "bash", "console"):
            continue
        joined = re.sub(r"\\\n\s*", " ", body)
        lines += [ln.strip() for ln in joined.splitlines() if ln.strip().startswith("budgetctx ")]
    return lines


def _check_command_line(line: str) -> None:
    words = shlex.split(line, comments=True)
    words = words[: next((i for i, w in enumerate(words) if w in ("<", ">", "|")), len(words))]
    command: Command = typer.main.get_command(app)
    path = ["budgetctx"]
    rest = words[1:]
    while hasattr(command, "list_commands") and rest and not rest[0].startswith("-"):
        sub = command.get_command(Context(command), rest[0])
        assert sub is not None, f"{line!r}: no command {' '.join([*path, rest[0]])!r}"
        command, path, rest = sub, [*path, rest[0]], rest[1:]
    names = {opt for p in command.params for opt in (*p.opts, *p.secondary_opts)}
    names |= {"--help"}
    for word in rest:
        if word.startswith("-") and word != "-":
            assert word.split("=", 1)[0] in names, f"{line!r}: {' '.join(path)} has no {word}"


CLI_PAGES = [p for p in PAGES if _command_lines(p)]


@pytest.mark.parametrize("page", CLI_PAGES, ids=_name)
def test_command_lines_name_real_commands_and_options(page: Path) -> None:
    for line in _command_lines(page):
        _check_command_line(line)


def test_the_command_line_check_catches_what_the_issue_found() -> None:
    with pytest.raises(AssertionError, match="no command"):
        _check_command_line("budgetctx datasets inspect pubmedqa")
    with pytest.raises(AssertionError, match="has no --datadir"):
        _check_command_line("budgetctx cost --budget 512 --datadir DATA")
    _check_command_line("budgetctx select - --budget 256 --json < note.txt  # a comment")


RUN_PAGES = [p for p in PAGES if any(out == "run" for lang, _, _, out in _blocks(p))]


@pytest.mark.parametrize("page", RUN_PAGES, ids=_name)
def test_marked_shell_examples_run(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from budgetctx.data import sample_note

    monkeypatch.chdir(tmp_path)
    (tmp_path / "note.txt").write_text(sample_note(), encoding="utf-8")
    runner = CliRunner()
    for _, body, _, out in _blocks(page):
        if out != "run":
            continue
        joined = re.sub(r"\\\n\s*", " ", body)
        for line in (ln.strip() for ln in joined.splitlines()):
            if not line.startswith("budgetctx "):
                continue
            words = shlex.split(line, comments=True)[1:]
            stdin = None
            if "<" in words:
                at = words.index("<")
                stdin, words = (tmp_path / words[at + 1]).read_text(encoding="utf-8"), words[:at]
            result = runner.invoke(app, words, input=stdin)
            assert result.exit_code == 0, f"{_name(page)}: {line!r}: {result.output[-500:]}"
