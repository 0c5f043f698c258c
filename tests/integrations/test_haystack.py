"""BudgetCtxCompressor in a Haystack pipeline (in-memory store, BM25 retriever, PromptBuilder):
the prompt's context is within budget, provenance and meta survive, and the pipeline saved with
Pipeline.dumps and restored with Pipeline.loads gives the same prompt."""

from __future__ import annotations

import asyncio
import re

import pytest
from haystack import Document, Pipeline
from haystack.components.builders import PromptBuilder
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.document_stores.in_memory import InMemoryDocumentStore

from budgetctx import InputError, InvalidParameterError, get_tokenizer, pin_regex
from budgetctx.integrations.haystack import BudgetCtxCompressor

from ._corpus import JOIN, QUERY, TOKENIZER, assert_spans_slice, between, count, sections

BUDGET = 200
TEMPLATE = (
    "Context:\n<<{{ documents | map(attribute='content') | join('\\n\\n') }}>>\n"
    "Question: {{ query }}"
)
ALLOWED = ["budgetctx.integrations.haystack"]


def _pipeline(compressor: BudgetCtxCompressor) -> Pipeline:
    store = InMemoryDocumentStore()
    store.write_documents(
        [Document(content=text, meta={"section": name}) for name, text in sections()]
    )
    pipe = Pipeline()
    pipe.add_component("retriever", InMemoryBM25Retriever(document_store=store, top_k=10))
    pipe.add_component("compressor", compressor)
    pipe.add_component("prompt_builder", PromptBuilder(template=TEMPLATE))
    pipe.connect("retriever.documents", "compressor.documents")
    pipe.connect("compressor.documents", "prompt_builder.documents")
    return pipe


def _run(pipe: Pipeline) -> dict[str, dict[str, object]]:
    return pipe.run(
        {
            "retriever": {"query": QUERY},
            "compressor": {"query": QUERY},
            "prompt_builder": {"query": QUERY},
        },
        include_outputs_from={"retriever", "compressor"},
    )


def test_pipeline_prompt_is_within_budget_and_survives_serialisation() -> None:
    pins = ["FOLLOW-UP", re.compile(r"torsemide", re.IGNORECASE)]
    pipe = _pipeline(BudgetCtxCompressor(budget=BUDGET, tokenizer=TOKENIZER, pins=pins))
    result = _run(pipe)
    retrieved: list[Document] = result["retriever"]["documents"]  # type: ignore[assignment]
    out: list[Document] = result["compressor"]["documents"]  # type: ignore[assignment]
    prompt: str = result["prompt_builder"]["prompt"]  # type: ignore[assignment]
    assert sum(count(d.content or "") for d in retrieved) > BUDGET
    context = between(prompt, "<<", ">>")
    assert context == JOIN.join(d.content or "" for d in out)
    assert BUDGET // 2 < count(context) <= BUDGET
    assert 0 < len(out) < len(retrieved)
    by_id = {d.id: d for d in retrieved}
    for doc in out:
        source = by_id[doc.id]
        provenance = doc.meta["budgetctx"]
        assert {k: v for k, v in doc.meta.items() if k != "budgetctx"} == source.meta
        assert doc.score == source.score
        assert retrieved[provenance["document"]] is source
        assert_spans_slice(source.content or "", doc.content or "", provenance["spans"], "\n")
    assert any(d.meta["section"] == "FOLLOW-UP" for d in out)  # pinned

    text = pipe.dumps()
    again = Pipeline.loads(text, allowed_modules=ALLOWED)
    restored = again.get_component("compressor")
    assert isinstance(restored, BudgetCtxCompressor)
    assert restored.to_dict() == pipe.get_component("compressor").to_dict()
    rerun = _run(again)
    assert rerun["prompt_builder"]["prompt"] == prompt
    assert rerun["compressor"]["documents"] == out


def test_run_async_and_a_per_call_budget() -> None:
    docs = [Document(content=text, meta={"section": name}) for name, text in sections()]
    compressor = BudgetCtxCompressor(budget=BUDGET)
    sync = compressor.run(query=QUERY, documents=docs)
    assert asyncio.run(compressor.run_async(query=QUERY, documents=docs)) == sync
    small = compressor.run(query=QUERY, documents=docs, budget=40)["documents"]
    assert count(JOIN.join(d.content or "" for d in small)) <= 40
    assert all(d.meta["budgetctx"]["budget"] == 40 for d in small)
    with pytest.raises(InvalidParameterError, match="'budget' parameter"):
        compressor.run(query=QUERY, documents=docs, budget=0)


def test_a_document_without_text_is_refused() -> None:
    docs = [Document(content="Chest pain."), Document(content=None)]
    with pytest.raises(InputError, match="Document 1 has no text"):
        BudgetCtxCompressor(budget=10).run(query=None, documents=docs)


def test_to_dict_refuses_what_cannot_be_saved() -> None:
    compressor = BudgetCtxCompressor(budget=50, pins=[lambda unit: True])
    with pytest.raises(InvalidParameterError, match=r"pins.*cannot be serialised.*callable"):
        compressor.to_dict()
    compressor = BudgetCtxCompressor(budget=50, tokenizer=get_tokenizer(TOKENIZER))
    with pytest.raises(InvalidParameterError, match=r"list_tokenizers\(\)"):
        compressor.to_dict()


def test_regex_pins_round_trip() -> None:
    pins = [
        "ALLERGIES",
        3,
        re.compile("inr", re.IGNORECASE),
        pin_regex("furo semide", flags=re.VERBOSE),
    ]
    data = BudgetCtxCompressor(budget=300, pins=pins).to_dict()
    assert data["init_parameters"]["pins"] == [
        "ALLERGIES",
        3,
        {"regex": "inr", "flags": int(re.IGNORECASE)},
        {"regex": "furo semide", "flags": int(re.VERBOSE)},
    ]
    restored = BudgetCtxCompressor.from_dict(data)
    assert restored.to_dict() == data
    docs = [Document(content=text) for _, text in sections()]
    out = restored.run(query=QUERY, documents=docs)
    assert out == BudgetCtxCompressor(budget=300, pins=pins).run(query=QUERY, documents=docs)
    pinned = [u for d in out["documents"] for u in d.meta["budgetctx"]["pinned"]]
    assert 3 in pinned and len(pinned) >= 4  # the id, the section, both regexes
