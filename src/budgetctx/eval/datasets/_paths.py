"""Where datasets live: the ``data_dir`` argument, else ``$BUDGETCTX_DATA``, else a user cache."""

from __future__ import annotations

import os
from pathlib import Path

from budgetctx._errors import DatasetError

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
        path = Path(data_dir).expanduser()
    elif os.environ.get(DATA_ENV):
        path = Path(os.environ[DATA_ENV]).expanduser()
    else:
        path = Path.home() / ".cache" / "budgetctx" / "datasets"
    if path.exists() and not path.is_dir():
        # Every dataset would read as "absent" otherwise, which hides the typo.
        raise DatasetError(
            f"The data dir {path} is a file, not a folder; pass the folder that holds the "
            f"datasets (--data-dir, or ${DATA_ENV})."
        )
    return path
