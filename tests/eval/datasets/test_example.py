"""Example, assign_split and the public surface."""

from __future__ import annotations

import dataclasses
import json
import pickle

import pytest

import budgetctx.eval.datasets as ds
from budgetctx import InvalidParameterError
from budgetctx.eval.datasets import Example, assign_split


def test_public_names() -> None:
    assert ds.__all__ == [
        "DATA_ENV",
        "DEFAULT_VALIDATION_FRACTION",
        "FILE_LOADERS",
        "SPLITS",
        "DatasetInfo",
        "Example",
        "FetchReport",
        "Split",
        "assign_split",
        "dataset_info",
        "document_token_counts",
        "fetch_dataset",
        "list_datasets",
        "load_dataset",
        "parse_dataset_spec",
        "resolve_data_dir",
    ]
    assert ds.SPLITS == ("validation", "test")


def test_list_datasets() -> None:
    assert ds.list_datasets() == [
        "cochrane",
        "cochrane-pls",
        "csv",
        "jsonl",
        "leval",
        "leval:gov_report_summ",
        "leval:meeting_summ",
        "leval:news_summ",
        "leval:paper_assistant",
        "leval:patent_summ",
        "leval:review_summ",
        "leval:tv_show_summ",
        "mimic-bhc",
        "mtsamples",
        "pubmedqa",
    ]


def _example(**changes: object) -> Example:
    base = Example(
        "a", "doc", "ref", query="q", split="validation", meta={"k": [1, {"x": 2}]}, label="yes"
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_example_is_immutable() -> None:
    ex = _example()
    with pytest.raises(dataclasses.FrozenInstanceError):
        ex.document = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        ex.meta["k"] = 3  # type: ignore[index]
    with pytest.raises(TypeError):
        ex.meta["k"][1]["x"] = 3
    assert ex.meta["k"] == (1, {"x": 2})


def test_example_equality_hash_and_pickle() -> None:
    ex = _example()
    assert ex == _example()
    assert ex != _example(meta={"k": 0})
    assert hash(ex) == hash(_example())
    assert len({ex, _example()}) == 1
    again = pickle.loads(pickle.dumps(ex))
    assert again == ex
    assert dataclasses.replace(ex, split="test").split == "test"


def test_example_to_dict_is_json_ready() -> None:
    d = _example().to_dict()
    assert d == {
        "id": "a",
        "document": "doc",
        "reference": "ref",
        "query": "q",
        "split": "validation",
        "label": "yes",
        "meta": {"k": [1, {"x": 2}]},
    }
    assert json.loads(json.dumps(d)) == d


def test_example_defaults_and_bad_split() -> None:
    ex = Example("a", "doc", "ref")
    assert (ex.query, ex.split, dict(ex.meta), ex.label) == (None, "test", {}, None)
    with pytest.raises(InvalidParameterError, match="'train'"):
        Example("a", "doc", "ref", split="train")  # type: ignore[arg-type]


def test_assign_split_is_a_pinned_function_of_seed_and_key() -> None:
    # Pinned values: a change here silently reshuffles every published split.
    assert [assign_split(f"doc-{i}") for i in range(8)] == [
        "validation",
        "test",
        "test",
        "validation",
        "validation",
        "test",
        "test",
        "test",
    ]
    assert assign_split("doc-2", seed=0) == "test"
    assert assign_split("doc-2", seed=1) == "validation"


def test_assign_split_fraction() -> None:
    keys = [f"group-{i}" for i in range(20_000)]
    for fraction in (0.1, 0.3, 0.5):
        share = sum(assign_split(k, validation_fraction=fraction) == "validation" for k in keys)
        assert abs(share / len(keys) - fraction) < 0.015
    assert {assign_split(k, validation_fraction=0.0) for k in keys[:200]} == {"test"}
    assert {assign_split(k, validation_fraction=1.0) for k in keys[:200]} == {"validation"}
    a = [assign_split(k, seed=0) for k in keys[:500]]
    b = [assign_split(k, seed=1) for k in keys[:500]]
    assert a != b
