"""``datasets list | info | fetch``."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from budgetctx.cli._format import (
    dataset_line,
    key_values,
)
from budgetctx.cli._options import DataDir

datasets_app = typer.Typer(no_args_is_help=True, help="Evaluation datasets: list, info, fetch.")


def datasets_list(data_dir: DataDir = None) -> None:
    """Every dataset, whether it is present in the data dir, and its size."""
    from budgetctx.eval.datasets import dataset_info, list_datasets

    for name in list_datasets():
        typer.echo(dataset_line(name, dataset_info(name, data_dir=data_dir)))


def datasets_info(
    name: Annotated[str, typer.Argument(help="Dataset name (see 'budgetctx datasets list').")],
    data_dir: DataDir = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Source, licence, split rule, counts and file status of one dataset."""
    from budgetctx.eval.datasets import dataset_info

    info = dataset_info(name, data_dir=data_dir).to_dict()
    if as_json:
        typer.echo(json.dumps(info, indent=2, ensure_ascii=False))
        return
    for line in key_values(info):
        typer.echo(line)


def datasets_fetch(
    names: Annotated[list[str], typer.Argument(help="Dataset names.")],
    data_dir: DataDir = None,
    mirror: Annotated[
        str | None, typer.Option(help="A server with the data-dir layout (package mirror).")
    ] = None,
    timeout: Annotated[float, typer.Option(help="Seconds per request.")] = 60.0,
) -> None:
    """Download datasets from their official sources (pinned commits, sha256 checked)."""
    from budgetctx.eval.datasets import fetch_dataset

    for name in names:
        report = fetch_dataset(
            name,
            data_dir=data_dir,
            mirror=mirror,
            timeout=timeout,
            progress=lambda path, action: typer.echo(f"{action}: {path}", err=True),
        )
        typer.echo(
            f"{name}: {len(report.downloaded)} downloaded, {len(report.skipped)} already "
            f"present, {len(report.generated)} generated in {report.data_dir}"
        )


datasets_app.command("list")(datasets_list)
datasets_app.command("info")(datasets_info)
datasets_app.command("fetch")(datasets_fetch)
