"""BudgetCtxPostprocessor in a LlamaIndex query engine over an in-memory vector index: the
context part of the prompt the LLM receives is within budget, scores and metadata survive,
and provenance maps back to the source document."""

from __future__ import annotations

import pytest
from llama_index.core import Document, VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM
from llama_index.core.schema import NodeWithScore, TextNode

from budgetctx import InvalidParameterError, build_context, pin_regex
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


NOTE = "Chest pain on exertion. Troponin was negative twice. Discharged home on aspirin."
FIRST, THIRD = "Chest pain on exertion.", "Discharged home on aspirin."


def _node() -> NodeWithScore:
    node = TextNode(
        text=NOTE,
        id_="n",
        metadata={"ward": "7B"},
        start_char_idx=100,
        end_char_idx=100 + len(NOTE),
        embedding=[0.5] * 4,
    )
    return NodeWithScore(node=node, score=0.25)


def _costs() -> list[int]:
    """What each sentence of NOTE costs the budget (its text and a separator)."""
    return [u.tokens for u in build_context([NOTE], 100, document_header=None).units]


def _one(post: BudgetCtxPostprocessor) -> TextNode:
    source = _node()
    [out] = post.postprocess_nodes([source], query_str="chest pain troponin aspirin")
    assert out.score == 0.25 and out.node.node_id == "n"
    assert out.node.metadata["ward"] == "7B"
    assert "budgetctx" not in source.node.metadata  # the input node is left alone
    assert isinstance(out.node, TextNode)
    return out.node


def test_a_node_kept_whole_keeps_its_char_indices_and_embedding() -> None:
    node = _one(BudgetCtxPostprocessor(budget=100))
    assert node.text == NOTE
    assert (node.start_char_idx, node.end_char_idx) == (100, 100 + len(NOTE))
    assert node.embedding == [0.5] * 4


def test_a_node_cut_to_one_slice_gets_the_slice_char_indices() -> None:
    node = _one(BudgetCtxPostprocessor(budget=_costs()[0], selector="lead"))
    assert node.text == FIRST
    assert (node.start_char_idx, node.end_char_idx) == (100, 100 + len(FIRST))
    assert node.metadata["budgetctx"]["source_spans"] == [[100, 100 + len(FIRST)]]
    assert node.embedding is None


def test_a_node_cut_in_pieces_has_its_provenance_in_metadata() -> None:
    pins = [pin_regex("(?i)chest|aspirin")]
    node = _one(BudgetCtxPostprocessor(budget=_costs()[0] + _costs()[2], pins=pins))
    assert node.text == f"{FIRST}\n{THIRD}"
    assert node.start_char_idx is None and node.end_char_idx is None
    third = NOTE.index(THIRD)
    provenance = node.metadata["budgetctx"]
    assert provenance["spans"] == [[0, len(FIRST)], [third, len(NOTE)]]
    assert provenance["source_spans"] == [[100, 100 + len(FIRST)], [100 + third, 100 + len(NOTE)]]
    assert provenance["pinned"] == provenance["unit_ids"] == [0, 2]
    assert node.embedding is None


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
