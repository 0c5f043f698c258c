"""The provenance view as one self-contained HTML file (``budgetctx select --html``).

The page reuses, verbatim, the renderer and style of the served viewer
(``budgetctx/serve/static/viewer.html``), so the two views cannot drift apart; the data travels
as JSON inside ``<script type="application/json">``, never as markup.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
import re
from collections.abc import Sequence
from functools import cache
from importlib.resources import files
from typing import Any

from budgetctx._core.results import Context
from budgetctx._errors import InputError
from budgetctx.build._documents import Document, normalise_documents

__all__ = ["render_html", "viewer_html"]

_RENDERER_ID = "budgetctx-renderer"
_STYLE_ID = "budgetctx-style"

# The data goes through JSON.parse, so only the HTML tokenizer can be fooled: with every '<',
# '>' and '&' escaped, no '</script>' or '<!--' can end or bend the element early.
_JSON_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})

_BOOT = (
    '"use strict";\n'
    "BudgetCtxViewer.render(document.getElementById('bc-result'),\n"
    "  JSON.parse(document.getElementById('budgetctx-data').textContent));\n"
)


def viewer_html() -> str:
    """The served viewer page (form + renderer), as shipped in the package."""
    # Read through the budgetctx package so that budgetctx.serve (and FastAPI) is not imported.
    return files("budgetctx").joinpath("serve", "static", "viewer.html").read_text("utf-8")


@cache
def _element(tag: str, element_id: str) -> str:
    match = re.search(rf'<{tag} id="{element_id}">(.*?)</{tag}>', viewer_html(), flags=re.DOTALL)
    if match is None:  # pragma: no cover - the packaged page is tested
        raise RuntimeError(f"viewer.html has no <{tag} id={element_id!r}>; reinstall budgetctx.")
    return match.group(1)


def _finite(value: Any) -> Any:
    """JSON without NaN or Infinity, which JSON.parse rejects: they become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _csp_hash(script: str) -> str:
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def render_html(context: Context, documents: str | Document | Sequence[str | Document]) -> str:
    """One self-contained HTML page showing ``context`` over its ``documents``.

    ``documents`` is what was given to :func:`~budgetctx.build_context` (a str, a
    :class:`~budgetctx.Document`, or a sequence of them); each gets its own section when
    there are several. Kept units are highlighted by rank, excluded text is
    dimmed, and hovering a unit shows its relevance, gain and tokens. Nothing is fetched: the
    renderer, its style and the data are inlined, and a Content-Security-Policy allows only
    the page's own two scripts.

    >>> from budgetctx import build_context
    >>> note = "Chest pain. Troponin negative. Discharged home."
    >>> page = render_html(build_context(note, budget=6), note)
    >>> page.startswith("<!DOCTYPE html>") and "Troponin negative" in page
    True
    """
    docs = normalise_documents(documents)
    if len(docs) != len(context.documents):
        raise InputError(
            f"render_html got {len(docs)} document(s) for a context built from "
            f"{len(context.documents)}; pass the documents given to build_context, in order.",
            parameter="documents",
            value=len(docs),
        )
    # Only the text and id: the id labels a section; metadata is the caller's and stays out.
    entries = [{"text": d.text, "id": d.id} for d in docs]
    data = json.dumps(
        _finite({"documents": entries, "context": context.to_dict()}),
        ensure_ascii=False,
        allow_nan=False,
    ).translate(_JSON_ESCAPES)
    renderer = _element("script", _RENDERER_ID)
    csp = (
        "default-src 'none'; style-src 'unsafe-inline'; "
        f"script-src {_csp_hash(renderer)} {_csp_hash(_BOOT)}"
    )
    title = f"budgetctx: {context.tokens_used}/{context.budget} tokens, {context.selector}"
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n"
        f"<style>{_element('style', _STYLE_ID)}</style>\n"
        "<style>body { margin: 0 auto; max-width: 70rem; padding: 1rem; }</style>\n"
        "</head>\n<body>\n"
        '<div id="bc-result"></div>\n'
        f'<script type="application/json" id="budgetctx-data">{data}</script>\n'
        f"<script>{renderer}</script>\n"
        f"<script>{_BOOT}</script>\n"
        "</body>\n</html>\n"
    )
