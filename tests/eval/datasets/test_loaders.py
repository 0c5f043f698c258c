"""The built-in loaders on the shared data: counts, splits, queries, leakage, errors."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from budgetctx import DatasetError, InvalidParameterError, UnknownComponentError
from budgetctx.eval.datasets import dataset_info, list_datasets, load_dataset, resolve_data_dir

LEVAL_PAIRS = {
    "gov_report_summ": 14,
    "meeting_summ": 177,
    "news_summ": 12,
    "patent_summ": 14,
    "tv_show_summ": 14,
    "paper_assistant": 69,
    "review_summ": 144,
}
QUERY_TASKS = {"meeting_summ", "review_summ", "paper_assistant"}
SHARED_NAMES = [n for n in list_datasets() if n not in ("jsonl", "csv", "mimic-bhc")]
# (validation, test) at seed 0, fraction 0.3: pinned so that a change to the split rule shows.
SPLIT_SIZES = {
    "cochrane": (35, 55),
    "cochrane-pls": (411, 480),
    "leval": (79, 138),
    "leval:gov_report_summ": (3, 11),
    "leval:meeting_summ": (69, 108),
    "leval:news_summ": (1, 11),
    "leval:paper_assistant": (18, 51),
    "leval:patent_summ": (6, 8),
    "leval:review_summ": (42, 102),
    "leval:tv_show_summ": (2, 12),
    "mtsamples": (22, 65),
    "pubmedqa": (500, 500),
}


@pytest.mark.parametrize("task", sorted(LEVAL_PAIRS))
def test_leval_task_counts_ids_and_queries(shared_data: Path, task: str) -> None:
    examples = load_dataset(f"leval:{task}", data_dir=shared_data)
    assert len(examples) == LEVAL_PAIRS[task]
    for ex in examples:
        assert re.fullmatch(rf"leval:{task}:\d+:\d+", ex.id)
        _, _, doc, pair = ex.id.split(":")
        assert (ex.meta["doc_index"], ex.meta["pair_index"]) == (int(doc), int(pair))
        assert ex.meta["task"] == task
        assert ex.meta["evaluation"] in ("rouge", "LLM", "human")
        assert ex.query == (ex.meta["instruction"] if task in QUERY_TASKS else None)
        assert ex.document and ex.reference and ex.label is None


def test_leval_query_tasks_have_several_instructions(shared_data: Path) -> None:
    # The rule behind QUERY_TASKS: their documents carry different instructions.
    for task in LEVAL_PAIRS:
        by_doc: dict[str, set[str]] = defaultdict(set)
        for ex in load_dataset(f"leval:{task}", data_dir=shared_data):
            by_doc[ex.document].add(ex.meta["instruction"])
        assert (max(len(v) for v in by_doc.values()) > 1) == (task in QUERY_TASKS)


def test_leval_is_the_papers_four_tasks(shared_data: Path) -> None:
    examples = load_dataset("leval", data_dir=shared_data)
    assert Counter(e.meta["task"] for e in examples) == {
        "gov_report_summ": 14,
        "meeting_summ": 177,
        "news_summ": 12,
        "patent_summ": 14,
    }
    parts = [
        e
        for task in ("gov_report_summ", "meeting_summ", "news_summ", "patent_summ")
        for e in load_dataset(f"leval:{task}", data_dir=shared_data)
    ]
    assert examples == parts  # same ids, texts and splits as the task datasets


def test_leval_documents_never_straddle_splits(shared_data: Path) -> None:
    for seed in range(5):
        splits: dict[str, set[str]] = defaultdict(set)
        for ex in load_dataset("leval:meeting_summ", data_dir=shared_data, seed=seed):
            splits[ex.document].add(ex.split)
        assert all(len(s) == 1 for s in splits.values())
        assert {s for v in splits.values() for s in v} == {"validation", "test"}


def test_cochrane(shared_data: Path) -> None:
    examples = load_dataset("cochrane", data_dir=shared_data)
    assert len(examples) == 90
    assert dataset_info("cochrane", data_dir=shared_data).skipped == 10
    # 7 reviews use the 2024+ headings (Rationale ... Synthesis of results).
    assert Counter(e.document.split("\n")[0] for e in examples) == {
        "Background": 83,
        "Rationale": 7,
    }
    for ex in examples:
        assert re.fullmatch(r"CD\d{6}(\.PUB\d+)?", ex.id)
        # The conclusions are the reference and nowhere in the document.
        assert "Authors' conclusions" not in ex.document
        assert ex.reference not in ex.document
        assert not ex.reference.startswith("Authors")
        assert ex.query is None
        raw = json.loads(
            (shared_data / "cochrane" / "tsar2025_cochrane_abstracts" / f"{ex.id}.json").read_text()
        )["abstract"]
        assert raw.startswith(ex.document) and raw.endswith(ex.reference)


def test_cochrane_pls_uses_its_official_split(shared_data: Path) -> None:
    examples = load_dataset("cochrane-pls", data_dir=shared_data)
    assert Counter(e.split for e in examples) == {"validation": 411, "test": 480}
    assert all(
        e.split == {"val": "validation", "test": "test"}[e.meta["source_split"]] for e in examples
    )
    assert examples[0].id.startswith("10.1002/14651858.CD")
    reseeded = load_dataset("cochrane-pls", data_dir=shared_data, seed=7, validation_fraction=0.9)
    assert [e.split for e in reseeded] == [e.split for e in examples]


def test_pubmedqa(shared_data: Path) -> None:
    examples = load_dataset("pubmedqa", data_dir=shared_data)
    assert len(examples) == 1000
    test = [e for e in examples if e.split == "test"]
    official = json.loads((shared_data / "pubmedqa" / "test_ground_truth.json").read_text())
    assert {e.id for e in test} == set(official)
    assert Counter(e.label for e in examples) == {"yes": 552, "no": 338, "maybe": 110}
    assert Counter(e.label for e in test) == {"yes": 276, "no": 169, "maybe": 55}
    assert all(official[e.id] == e.label for e in test)
    raw = json.loads((shared_data / "pubmedqa" / "ori_pqal.json").read_text())
    for ex in examples:
        record = raw[ex.id]
        assert ex.query == record["QUESTION"]
        assert ex.document == "\n\n".join(record["CONTEXTS"])
        assert ex.reference == record["LONG_ANSWER"]
        assert ex.meta["labels"] == tuple(record["LABELS"])
    assert load_dataset("pubmedqa", data_dir=shared_data, seed=3) == examples


def test_mtsamples_hospital_course(shared_data: Path) -> None:
    examples = load_dataset("mtsamples", data_dir=shared_data)
    assert len(examples) == 87
    assert dataset_info("mtsamples", data_dir=shared_data).skipped == 24
    assert Counter(e.meta["reference_header"] for e in examples) == {
        "HOSPITAL COURSE": 73,
        "COURSE IN THE HOSPITAL": 4,
        "HISTORY AND HOSPITAL COURSE": 3,
        "HOSPITAL COURSE AND TREATMENT": 2,
        "BRIEF HOSPITAL COURSE": 1,
        "BRIEF HOSPITAL COURSE SUMMARY": 1,
        "BRIEF SUMMARY OF HOSPITAL COURSE": 1,
        "HOSPITAL COURSE PER PROBLEM LIST": 1,
        "HOSPITAL COURSE SUMMARY": 1,
    }
    for ex in examples:
        header = ex.meta["reference_header"]
        # The section left the document: neither its header line nor its text remain.
        assert f"{header}:" not in ex.document
        assert ex.reference not in ex.document
        assert ex.query is None
    docs = [len(e.document.split()) for e in examples]
    refs = [len(e.reference.split()) for e in examples]
    # The statistics published in SOURCE.md for the same 87 notes.
    assert (min(refs), max(refs), round(sum(refs) / 87, 1)) == (12, 637, 208.0)
    assert (min(docs), max(docs), round(sum(docs) / 87, 1)) == (12, 680, 225.8)


@pytest.mark.parametrize("name", SHARED_NAMES)
def test_ids_unique_and_splits_stable(shared_data: Path, name: str) -> None:
    first = load_dataset(name, data_dir=shared_data)
    second = load_dataset(name, data_dir=shared_data)
    assert first == second
    assert len({e.id for e in first}) == len(first)
    sizes = Counter(e.split for e in first)
    assert (sizes["validation"], sizes["test"]) == SPLIT_SIZES[name]


@pytest.mark.parametrize("name", ["leval", "cochrane", "mtsamples"])
def test_seed_changes_hashed_splits(shared_data: Path, name: str) -> None:
    a = [e.split for e in load_dataset(name, data_dir=shared_data, seed=0)]
    b = [e.split for e in load_dataset(name, data_dir=shared_data, seed=1)]
    assert a != b
    everything = load_dataset(name, data_dir=shared_data, validation_fraction=1.0)
    assert {e.split for e in everything} == {"validation"}


def test_hashed_fraction_over_the_shared_groups(shared_data: Path) -> None:
    # Groups (documents, reviews, notes) of all hashed datasets over 10 seeds: near 0.3.
    shares = []
    for seed in range(10):
        seen: dict[str, str] = {}
        for name in ("leval:meeting_summ", "leval:review_summ", "cochrane", "mtsamples"):
            for ex in load_dataset(name, data_dir=shared_data, seed=seed):
                seen[ex.document] = ex.split
        shares.append(sum(s == "validation" for s in seen.values()) / len(seen))
    assert abs(sum(shares) / len(shares) - 0.3) < 0.03


def test_split_and_limit(shared_data: Path) -> None:
    everything = load_dataset("pubmedqa", data_dir=shared_data)
    assert load_dataset("pubmedqa", data_dir=shared_data, limit=5) == everything[:5]
    assert load_dataset("pubmedqa", data_dir=shared_data, limit=0) == []
    assert len(load_dataset("pubmedqa", data_dir=shared_data, limit=5000)) == 1000
    test = load_dataset("pubmedqa", data_dir=shared_data, split="test", limit=3)
    assert test == [e for e in everything if e.split == "test"][:3]
    validation = load_dataset("cochrane", data_dir=shared_data, split="validation")
    assert {e.split for e in validation} == {"validation"}


@pytest.mark.parametrize(
    ("options", "parameter"),
    [
        ({"split": "train"}, "split"),
        ({"limit": -1}, "limit"),
        ({"limit": 2.5}, "limit"),
        ({"limit": True}, "limit"),
        ({"seed": "0"}, "seed"),
        ({"validation_fraction": 1.5}, "validation_fraction"),
        ({"validation_fraction": float("nan")}, "validation_fraction"),
        ({"path": "x.csv"}, "dataset_options"),
    ],
)
def test_bad_options(shared_data: Path, options: dict[str, object], parameter: str) -> None:
    with pytest.raises(InvalidParameterError) as info:
        load_dataset("pubmedqa", data_dir=shared_data, **options)  # type: ignore[arg-type]
    assert info.value.parameter == parameter


def test_unknown_dataset_lists_names() -> None:
    with pytest.raises(UnknownComponentError, match="'pubmedqa'") as info:
        load_dataset("pubmed")
    assert "leval:meeting_summ" in info.value.available
    with pytest.raises(UnknownComponentError):
        load_dataset("leval:narrative_qa")


@pytest.mark.parametrize("name", SHARED_NAMES)
def test_missing_data_names_the_path_and_the_fix(tmp_path: Path, name: str) -> None:
    with pytest.raises(DatasetError) as info:
        load_dataset(name, data_dir=tmp_path)
    message = str(info.value)
    assert str(tmp_path) in message
    assert f"budgetctx datasets fetch {name}" in message
    assert "BUDGETCTX_DATA" in message


def test_data_dir_resolution(
    shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert resolve_data_dir() == tmp_path / ".cache" / "budgetctx" / "datasets"
    with pytest.raises(DatasetError, match=re.escape(str(resolve_data_dir()))):
        load_dataset("pubmedqa")
    monkeypatch.setenv("BUDGETCTX_DATA", str(shared_data))
    assert resolve_data_dir() == shared_data
    assert len(load_dataset("pubmedqa")) == 1000
    # The argument wins over the environment.
    with pytest.raises(DatasetError, match="was not found"):
        load_dataset("pubmedqa", data_dir=tmp_path)
    assert resolve_data_dir("~/x") == tmp_path / "x"


def test_dataset_info(shared_data: Path) -> None:
    info = dataset_info("leval:meeting_summ", data_dir=shared_data)
    assert info.available and info.error is None
    assert info.fetchable
    assert info.repository == "https://github.com/OpenLMLab/LEval"
    assert info.commit == "cd34b050269148aed75acbbe4a599873ad0f37e9"
    assert info.files_present == ("leval/meeting_summ.jsonl",) and info.files_missing == ()
    assert dict(info.n_examples) == {"validation": 69, "test": 108, "total": 177}
    assert (info.median_document_words, info.median_reference_words) == (10303.0, 59.0)
    assert "GPL" in info.license
    json.dumps(info.to_dict())
    mts = dataset_info("mtsamples", data_dir=shared_data)
    assert len(mts.files_present) == 113 and mts.files_missing == ()
    assert (mts.median_document_words, mts.median_reference_words) == (184.0, 171.0)
    cochrane = dataset_info("cochrane", data_dir=shared_data)
    assert (cochrane.median_document_words, cochrane.skipped) == (730.0, 10)


def test_dataset_info_for_missing_data(tmp_path: Path) -> None:
    info = dataset_info("pubmedqa", data_dir=tmp_path)
    assert not info.available
    assert info.files_present == ()
    assert info.files_missing == ("pubmedqa/ori_pqal.json", "pubmedqa/test_ground_truth.json")
    assert info.n_examples == {} and info.median_document_words is None
    assert info.error is not None and "budgetctx datasets fetch pubmedqa" in info.error
    generic = dataset_info("jsonl")
    assert not generic.fetchable and generic.error is not None and "path=" in generic.error
