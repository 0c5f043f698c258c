"""Dataset specs as the sweep and the CLI write them: a registered name, or a file loader
with its path and column mapping (``"jsonl:notes.jsonl?document=text&reference=summary"``).

>>> parse_dataset_spec("jsonl:x.jsonl?document=text")
('jsonl', {'path': 'x.jsonl', 'document': 'text'})
>>> parse_dataset_spec("leval:news_summ")
('leval:news_summ', {})
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from budgetctx._errors import InvalidParameterError

__all__ = ["FILE_LOADERS", "document_token_counts", "parse_dataset_spec"]

#: Loaders that read a file named in the spec rather than a registered dataset.
FILE_LOADERS = ("jsonl", "csv", "mimic-bhc")


def parse_dataset_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """The loader name and its options (``path`` plus the ``?key=value&...`` mapping)."""
    if not isinstance(spec, str) or not spec.strip():
        raise InvalidParameterError(
            f"A dataset spec must be a non-empty str, got {spec!r:.80}; pass a dataset name "
            "(budgetctx datasets list) or jsonl:PATH.",
            parameter="datasets",
            value=repr(spec)[:80],
        )
    kind, sep, rest = spec.partition(":")
    if not sep or kind not in FILE_LOADERS:
        return spec, {}
    path, _, query = rest.partition("?")
    if not path:
        raise InvalidParameterError(
            f"The dataset spec {spec!r} names no file; write {kind}:PATH, e.g. "
            f"{kind}:notes.{kind if kind != 'mimic-bhc' else 'csv'}.",
            parameter="datasets",
            value=spec,
        )
    options: dict[str, Any] = {"path": path}
    for item in filter(None, query.split("&")):
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise InvalidParameterError(
                f"Bad column mapping {item!r} in the dataset spec {spec!r}; write "
                "?document=COLUMN&reference=COLUMN.",
                parameter="datasets",
                value=spec,
            )
        options[key] = value
    return kind, options


def document_token_counts(
    dataset: str,
    *,
    tokenizer: str = "o200k_base",
    data_dir: str | Path | None = None,
    split: str | None = None,
    limit: int | None = None,
) -> list[int]:
    """Token counts of a dataset's documents: the length distribution that the cost model
    compares a budget with (``budgetctx cost --dataset``).

    >>> document_token_counts("mtsamples", limit=2)  # doctest: +SKIP
    [1013, 2315]
    """
    from budgetctx.eval.datasets._registry import load_dataset
    from budgetctx.tokenizers import get_tokenizer

    tok = get_tokenizer(tokenizer)
    name, options = parse_dataset_spec(dataset)
    examples = load_dataset(
        name,
        data_dir=str(data_dir) if data_dir is not None else None,
        split=split,
        limit=limit,
        **options,
    )
    return [tok.count(ex.document) for ex in examples]
