"""``python -m budgetctx.cli``."""

from __future__ import annotations

from budgetctx.cli import main

main()
