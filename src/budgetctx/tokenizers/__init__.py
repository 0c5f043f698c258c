"""Token counters that define the budget.

>>> from budgetctx.tokenizers import get_tokenizer
>>> get_tokenizer("o200k_base").count("Aspirin 81 mg p.o. daily.")
11
"""

from __future__ import annotations

from budgetctx.tokenizers._base import Tokenizer, get_tokenizer, list_tokenizers, register_tokenizer
from budgetctx.tokenizers._hf import HFTokenizer
from budgetctx.tokenizers._models import EstimatedTokenizer, QuicktokTokenizer, is_exact
from budgetctx.tokenizers._tiktoken import TiktokenTokenizer
from budgetctx.tokenizers._words import WordTokenizer

__all__ = [
    "EstimatedTokenizer",
    "HFTokenizer",
    "QuicktokTokenizer",
    "TiktokenTokenizer",
    "Tokenizer",
    "WordTokenizer",
    "get_tokenizer",
    "is_exact",
    "list_tokenizers",
    "register_tokenizer",
]
