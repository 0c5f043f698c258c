"""The provenance viewer in a real browser: Chromium (the Debian package) driven by Playwright.

Two views: the single file of ``budgetctx select --html`` opened over file://, and the page the
real server (``budgetctx.serve.create_app`` under uvicorn on a free loopback port) serves at /.

Playwright's own browser download is not used: the tests launch the system Chromium
(``$BUDGETCTX_CHROMIUM``, else ``chromium`` / ``chromium-browser`` / ``google-chrome`` on the
PATH) and skip, saying so, where none is installed (``make browser`` installs it with apt-get).
"""

from __future__ import annotations

import os
import re
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from budgetctx import Document, build_context, get_tokenizer
from budgetctx.build._html import render_html
from budgetctx.cli import app as cli_app

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
uvicorn = pytest.importorskip("uvicorn", reason="uvicorn is not installed (extra 'serve')")
pytest.importorskip("fastapi", reason="fastapi is not installed (extra 'serve')")

# Markup and script in the note must show as text: if either ran, window.__bcXss would be set.
XSS = "<img src=x onerror=\"window.__bcXss='img'\"><script>window.__bcXss='script'</script>"
NOTE = (
    "CHIEF COMPLAINT: Chest pain 😷 for two days.\n"
    f"HISTORY: {XSS} The patient reports pressure radiating to the left arm.\n"
    "Troponin negative twice. ECG without ischemic change. Aspirin was given in the ED.\n"
    "ALLERGIES: Penicillin (rash).\n"
    "PLAN: Discharged home with aspirin and follow-up in cardiology clinic in one week.\n"
)


def _chromium() -> str | None:
    named = os.environ.get("BUDGETCTX_CHROMIUM")
    if named:
        return named
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = _chromium()
    if executable is None:
        pytest.skip(
            "no Chromium found (chromium, chromium-browser or google-chrome on the PATH, or "
            "$BUDGETCTX_CHROMIUM): install it with `make browser` or "
            "`apt-get install chromium chromium-driver`"
        )
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable)
        yield launched
        launched.close()


@pytest.fixture()
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context()
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    opened.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    opened.errors = errors
    yield opened
    context.close()


def _assert_no_xss(page: Any) -> None:
    assert page.evaluate("window.__bcXss") is None
    # The markup is shown as text, not turned into elements.
    assert page.locator(".bc-view img, .bc-view script").count() == 0
    assert XSS in page.locator(".bc-text").first.text_content()


def _tokens_line(page: Any) -> tuple[int, int]:
    text = page.locator(".bc-tokens").text_content()
    match = re.match(r"(\d+) / (\d+) tokens used", text)
    assert match is not None, text
    return int(match.group(1)), int(match.group(2))


def test_html_file_highlights_kept_units_by_rank(page: Any, tmp_path: Path) -> None:
    note = tmp_path / "note.txt"
    note.write_text(NOTE, encoding="utf-8")
    out = tmp_path / "view.html"
    result = CliRunner().invoke(
        cli_app, ["select", str(note), "-b", "40", "--selector", "mmr", "--html", str(out)]
    )
    assert result.exit_code == 0, result.output
    ctx = build_context(NOTE, 40, selector="mmr")
    assert ctx.text == result.stdout.rstrip("\n")

    page.goto(out.as_uri())
    marks = page.locator("mark.bc-unit[data-unit]")
    expected = [(u, NOTE[a:b]) for u in ctx.units for a, b in u.spans]
    assert marks.count() == len(expected) >= 2
    by_text = sorted(expected, key=lambda e: NOTE.index(e[1]))
    for i, (unit, text) in enumerate(by_text):
        mark = marks.nth(i)
        # The exact characters of the span, the emoji before it notwithstanding.
        assert mark.text_content() == text
        assert mark.get_attribute("data-unit") == str(unit.id)
        title = mark.get_attribute("title")
        assert f"relevance {unit.relevance:.3f}" in title and f"{unit.tokens} tokens" in title
    intensity = {
        int(marks.nth(i).get_attribute("data-rank")): float(
            marks.nth(i).evaluate("m => m.style.getPropertyValue('--bc-intensity')")
        )
        for i in range(marks.count())
    }
    ranks = sorted(intensity)
    assert intensity[ranks[0]] > intensity[ranks[-1]]
    # Everything not kept is shown, dimmed: the page holds the whole note.
    assert page.locator(".bc-text").text_content() == NOTE
    assert page.locator(".bc-excluded").count() >= 1
    assert _tokens_line(page) == (ctx.tokens_used, 40)
    width = page.locator(".bc-bar-used").evaluate("e => e.style.width")
    assert float(width.rstrip("%")) == pytest.approx(100 * ctx.tokens_used / 40, abs=0.01)
    assert page.locator(".bc-selector dd").text_content() == "mmr"
    assert page.locator(".bc-route").count() == 0  # no router ran
    _assert_no_xss(page)
    assert page.errors == []


def test_html_file_shows_the_route_when_auto(page: Any, tmp_path: Path) -> None:
    out = tmp_path / "auto.html"
    note = tmp_path / "note.txt"
    note.write_text(NOTE, encoding="utf-8")
    result = CliRunner().invoke(
        cli_app, ["select", str(note), "-b", "30", "--selector", "auto", "--html", str(out)]
    )
    assert result.exit_code == 0, result.output
    route = build_context(NOTE, 30, selector="auto").route
    assert route is not None
    page.goto(out.as_uri())
    shown = page.locator(".bc-route").text_content()
    assert f"chose {route.selector}" in shown and route.reason in shown
    assert "confidence" not in shown  # plain words, not a score that reads as an error
    assert page.errors == []


def test_html_file_has_a_section_per_document(page: Any, tmp_path: Path) -> None:
    echo = "ECHO: Ejection fraction 55%. No wall motion abnormality. Troponin negative."
    docs = [Document(NOTE, id="ed-note"), Document(echo, id="echo")]
    ctx = build_context(docs, 70, query="troponin")
    assert {u.document for u in ctx.units} == {0, 1}
    out = tmp_path / "two.html"
    out.write_text(render_html(ctx, docs), encoding="utf-8")
    page.goto(out.as_uri())
    sections = page.locator("section.bc-doc")
    assert sections.count() == 2
    for d, (doc, summary) in enumerate(zip(docs, ctx.documents, strict=True)):
        section = sections.nth(d)
        heading = section.locator("h3").text_content()
        assert heading.startswith(doc.id or "")
        assert f"{summary.tokens_kept} of {summary.tokens} tokens" in heading
        assert section.locator(".bc-text").text_content() == doc.text
        marks = section.locator("mark.bc-unit").evaluate_all(
            "ms => ms.map(m => [Number(m.dataset.unit), m.textContent])"
        )
        expected = sorted(
            ([u.id, doc.text[a:b]] for u in ctx.units if u.document == d for a, b in u.spans),
            key=lambda e: doc.text.index(e[1]),
        )
        assert marks == expected
    assert page.locator(".bc-context-text").text_content() == ctx.text
    assert page.errors == []


# -- the served viewer -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    from budgetctx.serve import create_app

    config = uvicorn.Config(create_app(), host="127.0.0.1", port=0, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            pytest.fail("uvicorn did not start within 20 s")
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}/"
    server.should_exit = True
    thread.join(timeout=10)


def test_served_viewer_builds_and_renders_a_context(page: Any, server_url: str) -> None:
    page.goto(server_url)
    page.fill("#bc-text", NOTE)
    page.fill("#bc-budget", "35")
    page.fill("#bc-tokenizer", "o200k_base")  # the bundled router's tokenizer
    page.select_option("#bc-selector", "auto")
    page.fill("#bc-query", "troponin")
    page.click("#bc-submit")
    page.wait_for_selector("mark.bc-unit[data-unit]")
    used, budget = _tokens_line(page)
    assert budget == 35 and 0 < used <= budget
    assert page.locator("#bc-status").text_content() == f"done: {used} / {budget} tokens"
    # The answer rendered is the library's: same units, same count in the chosen tokenizer.
    ctx = build_context([Document(NOTE)], 35, selector="auto", query="troponin")
    assert used == ctx.tokens_used == get_tokenizer("o200k_base").count(ctx.text)
    shown = {
        int(m)
        for m in page.locator("mark.bc-unit").evaluate_all(
            "ms => ms.filter(m => m.dataset.unit).map(m => m.dataset.unit)"
        )
    }
    assert shown == set(ctx.kept_ids)
    assert ctx.route is not None and ctx.route.reason in page.locator(".bc-route").text_content()
    _assert_no_xss(page)
    assert page.errors == []


def test_served_viewer_sends_pins_and_reserve(page: Any, server_url: str) -> None:
    page.goto(server_url)
    page.fill("#bc-text", NOTE)
    page.fill("#bc-budget", "60")
    page.fill("#bc-reserve", "5")
    page.select_option("#bc-selector", "lead")
    page.fill("#bc-pin-sections", "allergies")
    page.fill("#bc-pin-regex", "(?i)cardiology")
    page.click("#bc-submit")
    page.wait_for_selector("mark.bc-unit[data-unit]")
    used, budget = _tokens_line(page)
    assert budget == 60 and 0 < used <= budget - 5
    assert "(reserve 5)" in page.locator(".bc-tokens").text_content()
    pinned = page.locator("mark.bc-pinned").evaluate_all("ms => ms.map(m => m.textContent)")
    assert pinned == [
        "ALLERGIES: Penicillin (rash).",
        "PLAN: Discharged home with aspirin and follow-up in cardiology clinic in one week.",
    ]
    assert page.locator("mark.bc-pinned").first.get_attribute("title").endswith("pinned")
    assert page.errors == []


def test_served_viewer_takes_uploaded_files_as_documents(page: Any, server_url: str) -> None:
    echo = "ECHO: Ejection fraction 55%. No wall motion abnormality. Troponin negative."
    page.goto(server_url)
    page.set_input_files(
        "#bc-files",
        files=[
            {"name": "ed.txt", "mimeType": "text/plain", "buffer": NOTE.encode()},
            {"name": "echo.txt", "mimeType": "text/plain", "buffer": echo.encode()},
        ],
    )
    page.wait_for_function("document.getElementById('bc-status').textContent.startsWith('added')")
    page.fill("#bc-budget", "70")
    page.select_option("#bc-selector", "mmr")
    page.fill("#bc-query", "troponin")
    page.click("#bc-submit")
    page.wait_for_selector("mark.bc-unit[data-unit]")
    headings = page.locator("section.bc-doc h3").all_text_contents()
    assert [h.split(" \u2014 ")[0] for h in headings] == ["ed.txt", "echo.txt"]
    texts = page.locator("section.bc-doc .bc-text").all_text_contents()
    assert texts == [NOTE, echo]
    ctx = build_context(
        [Document(NOTE, id="ed.txt"), Document(echo, id="echo.txt")], 70, query="troponin"
    )
    assert page.locator(".bc-context-text").text_content() == ctx.text
    assert _tokens_line(page) == (ctx.tokens_used, 70)
    assert page.errors == []


def test_served_viewer_shows_the_servers_error(page: Any, server_url: str) -> None:
    page.goto(server_url)
    page.fill("#bc-text", NOTE)
    page.fill("#bc-budget", "10")
    page.fill("#bc-tokenizer", "no-such-tokenizer")
    page.click("#bc-submit")
    status = page.locator("#bc-status.bc-error")
    status.wait_for()
    assert re.match(r"HTTP 4\d\d: .*no-such-tokenizer", status.text_content())
    assert page.locator("mark.bc-unit").count() == 0
