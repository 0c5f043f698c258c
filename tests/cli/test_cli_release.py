"""The CLI as a newcomer meets it (issue 25): a version, help on every option, commands that
exist where the help names them, plain-words messages, progress on long work, --overwrite.

Every test goes through the real entry point: the installed ``app`` (CliRunner) or
``python -m budgetctx.cli`` in a subprocess where the process-level behaviour matters.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer

try:  # typer >= 0.24 vendors its own click (groups are commands with list_commands)
    from typer._click import Command, Context
except ImportError:  # pragma: no cover - older typer on the real click
    from click import Command, Context  # type: ignore[assignment]
from typer.testing import CliRunner

from budgetctx._version import __version__
from budgetctx.cli import app
from budgetctx.eval import SweepRow, SweepStore

runner = CliRunner()
SRC = Path(__file__).resolve().parents[2] / "src"
NOTE = (
    "CHIEF COMPLAINT: Shortness of breath.\n"
    "HOSPITAL COURSE: She was diuresed with IV furosemide. Apixaban was continued at 5 mg.\n"
    "DISCHARGE MEDICATIONS:\n1. Torsemide 40 mg daily.\n2. Apixaban 5 mg b.i.d.\n"
)


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m budgetctx.cli ARGS`` with this checkout's source first on the path."""
    environ = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return subprocess.run(
        [sys.executable, "-m", "budgetctx.cli", *args],
        capture_output=True,
        text=True,
        env={**environ, **(env or {})},
        timeout=120,
    )


# -- version --------------------------------------------------------------------------------


def test_version_from_the_console_entry_point() -> None:
    proc = _cli("--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"budgetctx {__version__}"


def test_version_is_single_sourced() -> None:
    # pyproject.toml has no version of its own: hatch reads _version.py.
    pyproject = (SRC.parent / "pyproject.toml").read_text(encoding="utf-8")
    assert 'dynamic = ["version"]' in pyproject
    assert not re.search(r"(?m)^version\s*=", pyproject)
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__)
    changelog = (SRC.parent / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## [{__version__}]" in changelog


# -- help -----------------------------------------------------------------------------------


def _commands(group: Any, prefix: str = "") -> list[tuple[str, Command]]:
    out: list[tuple[str, Command]] = []
    ctx = Context(group)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        assert cmd is not None
        out.append((f"{prefix}{name}", cmd))
        if hasattr(cmd, "list_commands"):
            out += _commands(cmd, f"{prefix}{name} ")
    return out


ROOT_COMMAND = typer.main.get_command(app)
COMMANDS = [("(root)", ROOT_COMMAND), *_commands(ROOT_COMMAND)]  # type: ignore[arg-type]


@pytest.mark.parametrize(("name", "command"), COMMANDS, ids=[n for n, _ in COMMANDS])
def test_every_command_and_parameter_has_help(name: str, command: Command) -> None:
    assert (command.help or "").strip(), f"budgetctx {name} has no help"
    missing = [
        p.name
        for p in command.params
        if not (getattr(p, "help", None) or "").strip() and p.name != "help"
    ]
    assert not missing, f"budgetctx {name}: no help for {missing}"


def test_groups_advertise_only_commands_that_exist() -> None:
    # "Evaluation datasets: list, info, fetch." names every subcommand and nothing else.
    checked: list[str] = []
    for name, command in COMMANDS:
        if not hasattr(command, "list_commands"):
            continue
        head = (command.help or "").split("\n", 1)[0]
        if ":" not in head:
            continue  # a group whose help names no commands (the root) cannot disagree
        checked.append(name)
        listed = re.findall(r"[a-z][a-z-]*", head.split(":", 1)[1])
        real = set(command.list_commands(Context(command)))
        assert set(listed) == real, f"budgetctx {name} --help lists {listed}, has {sorted(real)}"
    assert "datasets" in checked
    result = runner.invoke(app, ["datasets", "inspect", "x"])
    assert result.exit_code == 2 and "No such command" in result.stderr


def test_cost_says_where_datasets_are_read_from(tmp_path: Path) -> None:
    result = runner.invoke(app, ["cost", "--help"])
    assert "--data-dir" in result.stdout and "read from" in result.stdout
    result = runner.invoke(
        app, ["cost", "--budget", "512", "-d", "mtsamples", "--data-dir", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert "--data-dir" in result.stderr and "datasets fetch mtsamples" in result.stderr


# -- calibrate follows the run --------------------------------------------------------------

RCD = "rcd:alpha=0.5,beta=0.5,gamma=0"


def _run(tmp_path: Path, selectors: tuple[str, ...] = ("lead", "mmr", RCD)) -> Path:
    """A sweep run as the README's sweep writes it (an rcd spec with options)."""
    run = tmp_path / "run"
    rows = [
        SweepRow(
            dataset="toy",
            example_id=f"{split}{k}",
            unitizer="sentence",
            selector=sel,
            budget=b,
            split=split,
            context_tokens=b,
            document_tokens=4000,
            n_units=100,
            kept=(),
            metrics={"rouge1": 0.5 if sel.startswith("rcd") else 0.2},
            stats={"phi": 0.3, "rho": 0.1, "length": 4000, "budget_ratio": b / 4000},
        )
        for split in ("validation", "test")
        for k in range(4)
        for b in (256, 512)
        for sel in (*selectors, "oracle")
    ]
    with SweepStore(run) as store:
        store.check_settings({"tokenizer": "o200k_base"})
        store.write(rows)
    return run


def test_calibrate_defaults_to_the_runs_selectors(tmp_path: Path) -> None:
    run, out = _run(tmp_path), tmp_path / "router.json"
    result = runner.invoke(app, ["calibrate", str(run), "--out", str(out), "--kind", "budget"])
    assert result.exit_code == 0, result.output
    config = json.loads(out.read_text(encoding="utf-8"))
    # The run's spec, options and all, wins every budget the run has (an empty regime keeps
    # the paper's placeholder, which never routes here).
    assert RCD in config["selectors"] and "rcd" not in config["selectors"]
    result = runner.invoke(app, ["route-eval", str(run), "--out", str(tmp_path / "re")])
    assert result.exit_code == 0, result.output
    assert f"| lead | mmr | {RCD} | per-budget upper |" in result.stdout


def test_calibrate_names_the_missing_selector_not_missing_rows(tmp_path: Path) -> None:
    run = _run(tmp_path)
    result = runner.invoke(
        app, ["calibrate", str(run), "--out", str(tmp_path / "r.json"), "--selectors", "lead,rcd"]
    )
    assert result.exit_code == 2
    line = result.stderr
    assert "has 32 validation rows" in line and "none for ['rcd']" in line
    assert RCD in line and "--selectors" in line


# -- messages a user reads ------------------------------------------------------------------


def test_warning_is_one_line_without_a_source_path(tmp_path: Path) -> None:
    note = tmp_path / "note.txt"
    note.write_text(NOTE, encoding="utf-8")
    proc = _cli("select", str(note), "-b", "20", "--pin", "NO SUCH SECTION")
    assert proc.returncode == 0, proc.stderr
    warning = [line for line in proc.stderr.splitlines() if "matched no unit" in line]
    assert warning == [warning[0]] and warning[0].startswith("budgetctx: warning: ")
    assert ".py" not in proc.stderr and "doc = " not in proc.stderr


def test_route_explanation_is_plain_words(tmp_path: Path) -> None:
    note = tmp_path / "note.txt"
    note.write_text(NOTE * 20, encoding="utf-8")
    result = runner.invoke(app, ["select", str(note), "-b", "100", "--selector", "auto"])
    assert result.exit_code == 0, result.output
    summary = result.stderr
    assert "chosen automatically" in summary and "budget 100 tokens" in summary
    for jargon in ("confidence", "b1=", "b2=", "fallback", "leaf"):
        assert jargon not in summary


def test_html_viewer_route_line_has_no_confidence_number() -> None:
    from budgetctx.build._html import render_html  # noqa: F401  (the viewer script is in the page)

    script = (SRC / "budgetctx" / "serve" / "static" / "viewer.html").read_text(encoding="utf-8")
    route = script[script.index("if (ctx.route)") : script.index("var notes = []")]
    assert "confidence" not in route.replace("// ", "").split("\n", 3)[-1]
    assert "The router chose" in route


# -- progress -------------------------------------------------------------------------------


def test_select_and_report_say_they_are_working(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import budgetctx._core.progress as progress

    note = tmp_path / "note.txt"
    note.write_text(NOTE, encoding="utf-8")
    quick = runner.invoke(app, ["select", str(note), "-b", "20"])
    assert "condensing" not in quick.stderr  # a fast call prints no progress
    monkeypatch.setattr(progress, "LINE_AFTER", 0.0)  # every call counts as slow now
    slow = runner.invoke(app, ["select", str(note), "-b", "20"])
    assert slow.exit_code == 0, slow.output
    assert f"budgetctx: condensing 1 document ({len(NOTE)} characters) ..." in slow.stderr
    assert "Apixaban" not in slow.stderr.split("\n")[0]  # sizes only, never the text
    report = runner.invoke(app, ["report", str(_run(tmp_path)), "--out", str(tmp_path / "r")])
    assert report.exit_code == 0, report.output
    assert "budgetctx: writing the report of" in report.stderr


def test_working_spinner_only_on_a_terminal_and_only_when_slow() -> None:
    from budgetctx._core.progress import Working

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    log = io.StringIO()
    with Working("x", stream=log, after=60):
        pass
    assert log.getvalue() == ""  # finished before the delay
    assert Working("x", stream=Tty()).after == 5.0  # a stream passed in is never drawn on
    assert Working("x").after in (0.5, 5.0)


# -- batch --overwrite ----------------------------------------------------------------------


def test_batch_overwrite_starts_again(tmp_path: Path) -> None:
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text(json.dumps({"id": "a", "text": NOTE}) + "\n", encoding="utf-8")
    args = ["batch", str(src), "--out", str(out), "--no-progress", "--workers", "1"]
    first = runner.invoke(app, [*args, "-b", "20"])
    assert first.exit_code == 0, first.output
    changed = runner.invoke(app, [*args, "-b", "30"])
    assert changed.exit_code == 2 and "--overwrite" in changed.stderr
    again = runner.invoke(app, [*args, "-b", "30", "--overwrite"])
    assert again.exit_code == 0, again.output
    row = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert row["budget"] == 30 and "1 new" in again.stderr
    # Nothing else was deleted or left behind (the batch's own lock file aside).
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")) == [
        "in.jsonl",
        "out.jsonl",
        "out.jsonl.journal.sqlite",
    ]


# -- Haystack telemetry ---------------------------------------------------------------------


def test_haystack_adapter_turns_telemetry_off(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("haystack")
    import haystack.telemetry._telemetry as haystack_telemetry

    from budgetctx.integrations import haystack as adapter

    # Imported in this process with the variable unset or False: it is False now.
    assert os.environ[adapter.TELEMETRY_ENV] == "False"
    # A haystack imported earlier with telemetry on is silenced by the adapter's import step.
    monkeypatch.setattr(haystack_telemetry, "telemetry", object())
    adapter._silence_telemetry()
    assert haystack_telemetry.telemetry is None


# -- the frontier figure --------------------------------------------------------------------


def test_frontier_figure_title_and_ring_legend(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("matplotlib")
    from budgetctx.eval.report import _figures
    from budgetctx.eval.report._frontier import FrontierPoint

    seen: dict[str, Any] = {}

    def keep(fig: Any, path: Any, dpi: int) -> Path:
        seen["title"] = fig.axes[0].get_title()
        seen["legend"] = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
        return Path(path)

    monkeypatch.setattr(_figures, "_save", keep)
    points = [
        FrontierPoint("d", b, "rouge1", m, m, m, 5, "sentence", "lead", monotone=b == 256)
        for b, m in [(256, 0.4), (512, 0.3)]
    ]
    _figures.plot_frontier(points, tmp_path / "f.png")
    assert "Pareto" not in seen["title"] and "at each budget" in seen["title"]
    assert any("ringed" in t and "below" in t for t in seen["legend"])


# -- select --selector with options: one spec grammar everywhere (issue 26) -----------------


def test_select_takes_a_selector_spec(tmp_path: Path) -> None:
    note = tmp_path / "note.txt"
    note.write_text(NOTE, encoding="utf-8")
    result = runner.invoke(app, ["select", str(note), "-b", "20", "--selector", "mmr:lambda_=0.3"])
    assert result.exit_code == 0, result.output
    # the options are read, not ignored: an unknown one is refused with the usage exit code
    bad = runner.invoke(app, ["select", str(note), "-b", "20", "--selector", "mmr:nope=1"])
    assert bad.exit_code == 2, bad.output
