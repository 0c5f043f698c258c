"""A MkDocs hook: the page that holds ``<!-- cli-reference -->`` gets the reference of every
``budgetctx`` command, generated from the CLI itself (its help texts, options and defaults),
so the page cannot drift from the commands."""

from __future__ import annotations

from typing import Any

MARKER = "<!-- cli-reference -->"


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _commands(group: Any, path: str) -> list[tuple[str, Any]]:
    try:
        from typer._click import Context
    except ImportError:  # pragma: no cover - older typer on the real click
        from click import Context

    out = []
    for name in group.list_commands(Context(group)):
        command = group.get_command(Context(group), name)
        out.append((f"{path} {name}", command))
        if hasattr(command, "list_commands"):
            out += _commands(command, f"{path} {name}")
    return out


def render() -> str:
    import typer

    from budgetctx.cli import app

    root = typer.main.get_command(app)
    lines: list[str] = []
    for path, command in _commands(root, "budgetctx"):
        lines += [f"## `{path}`", "", (command.help or "").strip(), ""]
        if hasattr(command, "list_commands"):
            continue
        lines += ["| option | default | what it does |", "|---|---|---|"]
        for param in command.params:
            if param.name == "help":
                continue
            names = ", ".join(f"`{o}`" for o in (*param.opts, *param.secondary_opts))
            if param.param_type_name == "argument":
                names = f"`{param.name.upper()}`" + (" ..." if param.nargs == -1 else "")
            default = param.default
            shown = "required" if param.required else ("" if default in (None, ()) else default)
            if isinstance(shown, bool) or shown == "":
                shown = "" if shown == "" else str(shown).lower()
            shown = f"`{shown}`" if shown not in ("", "required") else shown
            lines.append(
                f"| {names} | {_cell(shown)} | {_cell(getattr(param, 'help', '') or '')} |"
            )
        lines.append("")
    return "\n".join(lines)


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, render())
