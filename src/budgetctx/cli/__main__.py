"""``python -m budgetctx.cli``."""

from __future__ import annotations

from budgetctx.cli._app import main

main()
