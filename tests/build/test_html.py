"""The single-file provenance view: data embedded as inert JSON, the served renderer reused.

What the page shows is tested in a real browser (tests/serve/test_viewer_browser.py); these
tests pin the HTML itself, so they run where no browser is installed.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from budgetctx import Document, InputError, build_context, list_selectors, list_unitizers
from budgetctx.build._html import render_html, viewer_html
from budgetctx.cli import app

XSS = "<img src=x onerror=\"window.__bcXss='img'\"></script><script>window.__bcXss='s'</script><!--"
NOTE = (
    "CHIEF COMPLAINT: Chest pain.\n"
    f"HISTORY: {XSS} The patient reports pressure radiating to the left arm.\n"
    "Troponin negative twice. ECG without ischemic change.\n"
    "PLAN: Discharged home with aspirin & follow-up in clinic.\n"
)


class _Scripts(HTMLParser):
    """Every <script> element as (attributes, text), the way a browser splits the page."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._attrs: dict[str, str | None] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self._attrs = dict(attrs)
            self.scripts.append((self._attrs, ""))

    def handle_data(self, data: str) -> None:
        if self._attrs is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._attrs = None


def _scripts(page: str) -> list[tuple[dict[str, str | None], str]]:
    parser = _Scripts()
    parser.feed(page)
    parser.close()
    return parser.scripts


def test_data_is_one_inert_json_element_that_round_trips() -> None:
    ctx = build_context(NOTE, 40, selector="mmr")
    page = render_html(ctx, NOTE)
    scripts = _scripts(page)
    # The note's own </script> and <script> must not end the data element or open a new one.
    assert [attrs.get("type") for attrs, _ in scripts] == ["application/json", None, None]
    assert "</script><script>window" not in page
    data = json.loads(scripts[0][1])
    assert data["documents"] == [{"text": NOTE, "id": None}]
    assert data["context"] == json.loads(json.dumps(ctx.to_dict()))


def test_page_reuses_the_served_renderer_and_allows_only_its_own_scripts() -> None:
    page = render_html(build_context(NOTE, 30), NOTE)
    renderer = re.search(
        r'<script id="budgetctx-renderer">(.*?)</script>', viewer_html(), re.DOTALL
    )
    assert renderer is not None
    scripts = [text for attrs, text in _scripts(page) if attrs.get("type") is None]
    assert scripts[0] == renderer.group(1)
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page)
    assert csp is not None and "default-src 'none'" in csp.group(1)
    for text in scripts:
        digest = base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in csp.group(1)
    assert "unsafe-inline" not in csp.group(1).split("script-src")[1]


def test_nothing_is_fetched_from_elsewhere() -> None:
    for page in (render_html(build_context(NOTE, 30), NOTE), viewer_html()):
        assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
        assert "@import" not in page and "url(" not in page


def test_non_finite_scores_become_null() -> None:
    ctx = build_context(NOTE, 30)
    unit = ctx.units[0]
    odd = type(unit)(**{**unit.__dict__, "gain": float("inf"), "relevance": float("nan")})
    ctx = type(ctx)(**{**ctx.__dict__, "units": (odd, *ctx.units[1:])})
    data = json.loads(_scripts(render_html(ctx, NOTE))[0][1])
    assert data["context"]["units"][0]["gain"] is None
    assert data["context"]["units"][0]["relevance"] is None


def test_several_documents_keep_their_ids() -> None:
    docs = [Document(NOTE, id="ed-note", metadata={"mrn": "x"}), "Echo normal. Patient stable."]
    ctx = build_context(docs, 60)
    data = json.loads(_scripts(render_html(ctx, docs))[0][1])
    assert data["documents"] == [
        {"text": NOTE, "id": "ed-note"},
        {"text": "Echo normal. Patient stable.", "id": None},
    ]


def test_wrong_documents_are_input_errors() -> None:
    ctx = build_context(NOTE, 30)
    with pytest.raises(InputError, match=r"got 2 document\(s\) for a context built from 1"):
        render_html(ctx, [NOTE, NOTE])
    with pytest.raises(InputError, match=r"documents\[0\] is 3 \(int\)"):
        render_html(ctx, [3])  # type: ignore[list-item]


def test_viewer_form_offers_every_selector_and_unitizer() -> None:
    page = viewer_html()

    def options(select_id: str) -> list[str]:
        block = re.search(rf'<select id="{select_id}".*?</select>', page, re.DOTALL)
        assert block is not None
        return re.findall(r'<option value="([^"]+)"', block.group(0))

    assert sorted(options("bc-selector")) == sorted(["auto", *list_selectors()])
    assert sorted(options("bc-unitizer")) == sorted(list_unitizers())


def test_cli_select_html_writes_the_view(tmp_path: Path) -> None:
    note = tmp_path / "note.txt"
    note.write_text(NOTE, encoding="utf-8")
    out = tmp_path / "view.html"
    result = CliRunner().invoke(app, ["select", str(note), "-b", "30", "--html", str(out)])
    assert result.exit_code == 0, result.output
    assert f"written to {out}" in result.stderr
    data = json.loads(_scripts(out.read_text(encoding="utf-8"))[0][1])
    assert data["documents"] == [{"text": NOTE, "id": None}]
    assert data["context"]["text"] == result.stdout.rstrip("\n")
    assert data["context"]["tokens_used"] <= 30


def test_cli_html_into_a_missing_folder_exits_2(tmp_path: Path) -> None:
    note = tmp_path / "note.txt"
    note.write_text(NOTE, encoding="utf-8")
    out = tmp_path / "missing" / "view.html"
    result = CliRunner().invoke(app, ["select", str(note), "-b", "30", "--html", str(out)])
    assert result.exit_code == 2
    assert "check the path" in result.stderr


def test_cli_html_with_several_files_has_one_entry_per_file(tmp_path: Path) -> None:
    first, second = tmp_path / "ed.txt", tmp_path / "echo.txt"
    first.write_text(NOTE, encoding="utf-8")
    second.write_text("ECHO: Ejection fraction 55%. Troponin negative.", encoding="utf-8")
    out = tmp_path / "view.html"
    result = CliRunner().invoke(
        app, ["select", str(first), str(second), "-b", "60", "--html", str(out)]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(_scripts(out.read_text(encoding="utf-8"))[0][1])
    assert [d["id"] for d in data["documents"]] == [str(first), str(second)]
    assert [d["text"] for d in data["documents"]] == [NOTE, second.read_text(encoding="utf-8")]
    assert [d["id"] for d in data["context"]["documents"]] == [str(first), str(second)]
