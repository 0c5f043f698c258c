"""Where datasets live: the ``data_dir`` argument, else ``$BUDGETCTX_DATA``, else a user cache."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["DATA_ENV", "resolve_data_dir"]

DATA_ENV = "BUDGETCTX_DATA"


def resolve_data_dir(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """The dataset folder that :func:`load_dataset` and :func:`fetch_dataset` use.

    Order: ``data_dir``, then the ``BUDGETCTX_DATA`` environment variable, then
    ``~/.cache/budgetctx/datasets``. The folder is not created here.

    >>> str(resolve_data_dir("/srv/data"))
    '/srv/data'
    """
    if data_dir is not None:
        return Path(data_dir).expanduser()
    env = os.environ.get(DATA_ENV)
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "budgetctx" / "datasets"
