"""BudgetCtxCompressor in LangChain's own retrievers and chains: the budget holds on the prompt
the LLM receives, provenance slices the retrieved text, metadata survives."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_classic.chains.combine_documents import create_stuff_documents_chain
from langchain_classic.retrievers import ContextualCompressionRetriever
from langchain_classic.retrievers.document_compressors import DocumentCompressorPipeline
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.prompts import PromptTemplate
from langchain_core.runnables import RunnableLambda
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_text_splitters import CharacterTextSplitter

from budgetctx import InvalidParameterError, UnknownComponentError
from budgetctx.integrations.langchain import BudgetCtxCompressor

from ._corpus import JOIN, QUERY, TOKENIZER, assert_spans_slice, between, count, sections

BUDGET = 200


@pytest.fixture(scope="module")
def store() -> InMemoryVectorStore:
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    docs = [
        Document(text, metadata={"section": name, "note": "sample"}, id=f"s{i}")
        for i, (name, text) in enumerate(sections())
    ]
    store.add_documents(docs)
    return store


def _prompt_of(docs: list[Document]) -> str:
    """The prompt a stuff chain hands to its LLM (the LLM records it and answers 'ok')."""
    seen: list[str] = []

    def llm(prompt: Any) -> str:
        seen.append(prompt.to_string())
        return "ok"

    template = PromptTemplate.from_template("Context:\n<<{context}>>\nQuestion: {question}")
    chain = create_stuff_documents_chain(RunnableLambda(llm), template)
    assert chain.invoke({"context": docs, "question": QUERY}) == "ok"
    [prompt] = seen
    return prompt


def _check(retrieved: list[Document], out: list[Document]) -> None:
    """Budget on the prompt, provenance against the retrieved text, metadata kept."""
    assert sum(count(d.page_content) for d in retrieved) > BUDGET  # the budget had to cut
    context = between(_prompt_of(out), "<<", ">>")
    assert context == JOIN.join(d.page_content for d in out)
    assert BUDGET // 2 < count(context) <= BUDGET
    by_id = {d.id: d for d in retrieved}
    for doc in out:
        source = by_id[doc.id]
        provenance = doc.metadata.pop("budgetctx")
        assert doc.metadata == source.metadata
        assert retrieved[provenance["document"]] is source
        assert_spans_slice(source.page_content, doc.page_content, provenance["spans"], "\n")
        assert provenance["tokens"] == count(source.page_content)
        assert provenance["tokens_kept"] == count(doc.page_content)
        assert provenance["budget"] == BUDGET and provenance["tokenizer"] == TOKENIZER


def test_contextual_compression_retriever_keeps_the_prompt_within_budget(
    store: InMemoryVectorStore,
) -> None:
    base = store.as_retriever(search_kwargs={"k": 10})
    compressor = BudgetCtxCompressor(budget=BUDGET, tokenizer=TOKENIZER)
    retriever = ContextualCompressionRetriever(base_compressor=compressor, base_retriever=base)
    out = retriever.invoke(QUERY)
    retrieved = base.invoke(QUERY)
    assert 0 < len(out) < len(retrieved)
    assert [d.id for d in out] == [d.id for d in retrieved if d.id in {o.id for o in out}]
    _check(retrieved, out)
    assert asyncio.run(retriever.ainvoke(QUERY)) == retriever.invoke(QUERY)


def test_document_compressor_pipeline_keeps_provenance_to_the_source(
    store: InMemoryVectorStore,
) -> None:
    splitter = CharacterTextSplitter(
        separator="\n", chunk_size=300, chunk_overlap=0, add_start_index=True
    )
    compressor = BudgetCtxCompressor(budget=BUDGET, tokenizer=TOKENIZER, selector="facility")
    pipeline = DocumentCompressorPipeline(transformers=[splitter, compressor])
    base = store.as_retriever(search_kwargs={"k": 10})
    retriever = ContextualCompressionRetriever(base_compressor=pipeline, base_retriever=base)
    out = retriever.invoke(QUERY)
    chunks = splitter.split_documents(base.invoke(QUERY))
    assert len(chunks) > len(base.invoke(QUERY))  # the splitter did split
    context = between(_prompt_of(out), "<<", ">>")
    assert count(context) <= BUDGET
    # The splitter drops ids; the section names the source document.
    sources = {d.metadata["section"]: d.page_content for d in base.invoke(QUERY)}
    for doc in out:
        # spans are offsets into the chunk; start_index places the chunk in its source
        chunk = chunks[doc.metadata["budgetctx"]["document"]]
        assert chunk.metadata == {k: v for k, v in doc.metadata.items() if k != "budgetctx"}
        source, offset = sources[doc.metadata["section"]], doc.metadata["start_index"]
        for s, e in doc.metadata["budgetctx"]["spans"]:
            assert source[offset + s : offset + e] == chunk.page_content[s:e]
            assert chunk.page_content[s:e] in doc.page_content


def test_drop_empty_false_keeps_one_output_per_input() -> None:
    docs = [Document(text, metadata={"section": name}) for name, text in sections()]
    kept = BudgetCtxCompressor(budget=40).compress_documents(docs, QUERY)
    every = BudgetCtxCompressor(budget=40, drop_empty=False).compress_documents(docs, QUERY)
    assert 0 < len(kept) < len(docs) == len(every)
    assert [d.page_content for d in every if d.page_content] == [d.page_content for d in kept]
    assert [d.metadata["section"] for d in every] == [name for name, _ in sections()]


def test_no_documents_give_no_documents() -> None:
    assert BudgetCtxCompressor(budget=40).compress_documents([], QUERY) == []


def test_bad_options_fail_at_construction_with_the_fix() -> None:
    with pytest.raises(InvalidParameterError, match=r"'budget' parameter .* Got 0 instead; e\.g\."):
        BudgetCtxCompressor(budget=0)
    with pytest.raises(UnknownComponentError, match="Valid selectors are"):
        BudgetCtxCompressor(budget=10, selector="nope")
    with pytest.raises(InvalidParameterError, match="drop_empty"):
        BudgetCtxCompressor(budget=10, drop_empty="yes")


def test_fields_are_frozen() -> None:
    compressor = BudgetCtxCompressor(budget=10)
    with pytest.raises(ValueError, match="frozen"):
        compressor.budget = 20


def test_pins_are_kept_and_reserve_is_left_free() -> None:
    docs = [Document(text, metadata={"section": name}) for name, text in sections()]
    # Without pins the clinical profile (issue 22) already keeps the allergy list, as a
    # profile pin; an explicit pin must still hold it, with the reserve left free.
    plain = BudgetCtxCompressor(budget=120).compress_documents(docs, QUERY)
    assert "ALLERGIES" in [d.metadata["section"] for d in plain]
    compressor = BudgetCtxCompressor(budget=120, reserve=40, pins="allergies")
    out = compressor.compress_documents(docs, QUERY)
    assert count(JOIN.join(d.page_content for d in out)) <= 120 - 40
    [allergies] = [d for d in out if d.metadata["section"] == "ALLERGIES"]
    assert allergies.metadata["budgetctx"]["pinned"] == allergies.metadata["budgetctx"]["unit_ids"]
    with pytest.raises(InvalidParameterError, match="'reserve' parameter must be smaller"):
        BudgetCtxCompressor(budget=10, reserve=10)
