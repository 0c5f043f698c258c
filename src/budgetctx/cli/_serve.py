"""``serve``: the HTTP service and OpenAI-compatible proxy."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from budgetctx._errors import InvalidParameterError


def serve(
    host: Annotated[
        str, typer.Option(help="Address to bind; 127.0.0.1 keeps it on this machine.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8000,
    config: Annotated[
        Path | None, typer.Option(help="Configuration file (.toml, or .json).")
    ] = None,
    upstream: Annotated[
        str | None, typer.Option(help="Upstream base URL for /v1/chat/completions.")
    ] = None,
    provenance_size: Annotated[
        int | None, typer.Option(help="Provenance records kept; 0 keeps none.")
    ] = None,
    provenance_store: Annotated[
        str | None,
        typer.Option(
            help="sqlite (default: a 0600 file that survives restarts, no text) or memory."
        ),
    ] = None,
    provenance_path: Annotated[
        str | None,
        typer.Option(help="The SQLite provenance file (default: the user's state folder)."),
    ] = None,
    selection_processes: Annotated[
        int | None,
        typer.Option(help="Worker processes that condense (0: threads of the server)."),
    ] = None,
) -> None:
    """Serve the HTTP API and the OpenAI-compatible condensing proxy (extra 'serve')."""
    try:
        from budgetctx.serve import ServeConfig, load_config
        from budgetctx.serve._run import run
    except ImportError as exc:
        raise InvalidParameterError(
            f"budgetctx serve needs the 'serve' extra ({exc.name} is missing); "
            "pip install 'budgetctx[serve]'."
        ) from exc
    settings = load_config(config) if config is not None else ServeConfig()
    settings = settings.with_overrides(
        base_url=upstream,
        provenance_size=provenance_size,
        selection_processes=selection_processes,
        provenance_store=provenance_store,
        provenance_path=provenance_path,
    )
    run(settings, host=host, port=port)
