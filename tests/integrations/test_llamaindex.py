"""BudgetCtxPostprocessor in a LlamaIndex query engine over an in-memory vector index: the
context part of the prompt the LLM receives is within budget, scores and metadata survive,
and provenance maps back to the source document."""

from __future__ import annotations

import pytest
from llama_index.core import Document, VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM
from llama_index.core.schema import NodeWithScore, TextNode

from budgetctx import InvalidParameterError
from budgetctx.integrations.llamaindex import BudgetCtxPostprocessor

from ._corpus import JOIN, QUERY, TOKENIZER, assert_spans_slice, between, count, sections

BUDGET = 200


@pytest.fixture(scope="module")
def index() -> VectorStoreIndex:
    # Metadata is hidden from the LLM here so that the prompt's context is the node texts
    # alone, which is what the budget counts.
    docs = [
        Document(
            text=text,
            id_=f"s{i}",
            metadata={"section": name},
            excluded_llm_metadata_keys=["section"],
        )
        for i, (name, text) in enumerate(sections())
    ]
    return VectorStoreIndex.from_documents(docs, embed_model=MockEmbedding(embed_dim=8))


def test_query_engine_prompt_context_is_within_budget(index: VectorStoreIndex) -> None:
    post = BudgetCtxPostprocessor(budget=BUDGET, tokenizer=TOKENIZER)
    # MockLLM without max_tokens answers with the prompt it was given.
    engine = index.as_query_engine(
        llm=MockLLM(), node_postprocessors=[post], similarity_top_k=len(sections())
    )
    response = engine.query(QUERY)
    rule = "-" * 21  # LlamaIndex's default QA prompt frames the context with two rules
    context = between(str(response), f"below.\n{rule}\n", f"\n{rule}\nGiven")
    retrieved = index.as_retriever(similarity_top_k=len(sections())).retrieve(QUERY)
    assert sum(count(n.node.get_content()) for n in retrieved) > BUDGET
    assert BUDGET // 2 < count(context) <= BUDGET
    out = response.source_nodes
    assert context == JOIN.join(n.node.get_content() for n in out)
    assert 0 < len(out) < len(retrieved)
    by_id = {n.node.node_id: n for n in retrieved}
    texts = dict(sections())
    for scored in out:
        source = by_id[scored.node.node_id]
        assert scored.score == source.score
        provenance = scored.node.metadata["budgetctx"]
        assert {k: v for k, v in scored.node.metadata.items() if k != "budgetctx"} == (
            source.node.metadata
        )
        assert "budgetctx" in scored.node.excluded_llm_metadata_keys
        assert "budgetctx" in scored.node.excluded_embed_metadata_keys
        assert retrieved[provenance["document"]].node.node_id == source.node.node_id
        node_text = source.node.get_content()
        assert_spans_slice(node_text, scored.node.get_content(), provenance["spans"], "\n")
        document = texts[source.node.metadata["section"]]
        for (s, e), (ds, de) in zip(provenance["spans"], provenance["source_spans"], strict=True):
            assert document[ds:de] == node_text[s:e]


def _nodes() -> list[NodeWithScore]:
    texts = [text for _, text in sections()]
    return [
        NodeWithScore(
            node=TextNode(
                text=text,
                id_=f"n{i}",
                metadata={"i": i},
                start_char_idx=1000 * i,
                end_char_idx=1000 * i + len(text),
                embedding=[0.5] * 4,
            ),
            score=1.0 / (i + 1),
        )
        for i, text in enumerate(texts)
    ]


def test_char_indices_follow_what_was_kept() -> None:
    nodes = _nodes()
    out = BudgetCtxPostprocessor(budget=BUDGET).postprocess_nodes(nodes, query_str=QUERY)
    by_id = {n.node.node_id: n for n in nodes}
    kinds = set()
    for scored in out:
        node, source = scored.node, by_id[scored.node.node_id].node
        assert isinstance(node, TextNode) and isinstance(source, TextNode)
        assert node is not source and "budgetctx" not in source.metadata  # input untouched
        assert node.metadata["i"] == source.metadata["i"]
        if node.text == source.text:
            kinds.add("whole")
            assert (node.start_char_idx, node.end_char_idx) == (
                source.start_char_idx,
                source.end_char_idx,
            )
            assert node.embedding == source.embedding
        elif len(node.metadata["budgetctx"]["spans"]) == 1:
            kinds.add("slice")
            [[s, e]] = node.metadata["budgetctx"]["spans"]
            assert source.start_char_idx is not None
            assert (node.start_char_idx, node.end_char_idx) == (
                source.start_char_idx + s,
                source.start_char_idx + e,
            )
            assert node.embedding is None
        else:
            kinds.add("cut")
            assert node.start_char_idx is None and node.end_char_idx is None
            assert node.embedding is None
    assert kinds  # at least one node kept


def test_async_postprocessing_gives_the_same_nodes() -> None:
    import asyncio

    post = BudgetCtxPostprocessor(budget=BUDGET)
    sync = post.postprocess_nodes(_nodes(), query_str=QUERY)
    both = asyncio.run(post.apostprocess_nodes(_nodes(), query_str=QUERY))
    assert [(n.node.get_content(), n.score) for n in both] == [
        (n.node.get_content(), n.score) for n in sync
    ]


def test_bad_options_fail_at_construction() -> None:
    with pytest.raises(InvalidParameterError, match="'budget' parameter"):
        BudgetCtxPostprocessor(budget=-3)
    with pytest.raises(InvalidParameterError, match="'separator' parameter"):
        BudgetCtxPostprocessor(budget=10, separator=None)
