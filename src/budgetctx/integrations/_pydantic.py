"""The fields the two pydantic-based adapters (LangChain, LlamaIndex) share, declared once.

Imported only by those adapters, so only where their framework (and with it pydantic) is
installed. Each field is frozen: the :class:`~budgetctx.integrations._core.Condenser` is built
from them once, in ``__init__``, where a bad value raises budgetctx's
:class:`~budgetctx.InvalidParameterError` with its fix, before pydantic sees it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from budgetctx.integrations._core import DEFAULT_SELECTOR, OPTIONS, Condenser

__all__ = ["CondenserFields"]


class CondenserFields(BaseModel):
    """The adapters' options as pydantic fields, and the condenser built from them."""

    budget: int = Field(frozen=True)
    tokenizer: Any = Field(default="o200k_base", frozen=True)
    selector: Any = Field(default=DEFAULT_SELECTOR, frozen=True)
    unitizer: Any = Field(default="sentence", frozen=True)
    pins: Any = Field(default=None, frozen=True)
    reserve: int = Field(default=0, frozen=True)
    drop_empty: bool = Field(default=True, frozen=True)
    separator: str = Field(default="\n", frozen=True)
    document_separator: str = Field(default="\n", frozen=True)

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")
    _condenser: Condenser = PrivateAttr()

    def __init__(self, **data: Any) -> None:
        options = {k: v for k, v in data.items() if k in OPTIONS}
        condenser = Condenser(type(self).__name__, data.get("budget"), **options)
        super().__init__(**data)
        self._condenser = condenser
