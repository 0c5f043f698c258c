"""LlamaIndex: a node postprocessor that fits the retrieved nodes into a token budget.

Pass it as ``node_postprocessors=[...]`` to a query engine or a retriever query engine.
The response synthesizers join node texts with ``"\\n\\n"``, so the context they put into
the prompt is at most ``budget`` tokens (plus any metadata LlamaIndex renders for the LLM,
which the budget does not count: ``reserve`` room for it).

>>> from llama_index.core.schema import NodeWithScore, TextNode
>>> from budgetctx.integrations.llamaindex import BudgetCtxPostprocessor
>>> note = "Chest pain. Troponin negative. Discharged home."
>>> node = TextNode(text=note, metadata={"source": "note-1"}, start_char_idx=100)
>>> post = BudgetCtxPostprocessor(budget=8)
>>> [out] = post.postprocess_nodes([NodeWithScore(node=node, score=0.8)], query_str="troponin")
>>> out.node.text, out.score, out.node.metadata["source"], out.node.start_char_idx
('Troponin negative.', 0.8, 'note-1', 112)
"""

from __future__ import annotations

from budgetctx._errors import MissingExtraError
from budgetctx.integrations._core import PROVENANCE_KEY, require_items

try:
    from llama_index.core.postprocessor.types import BaseNodePostprocessor
    from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle, TextNode

    from budgetctx.integrations._pydantic import CondenserFields
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise MissingExtraError(__name__, "llama-index-core", "llamaindex") from exc

__all__ = ["BudgetCtxPostprocessor"]


class BudgetCtxPostprocessor(CondenserFields, BaseNodePostprocessor):
    """Keep the parts of the nodes that best fit ``budget`` tokens, relevant to the query.

    Output nodes come in input order with their scores, ids, relationships and own metadata.
    A node kept whole is returned unchanged but for its metadata; a node cut to one
    contiguous slice gets ``start_char_idx``/``end_char_idx`` moved onto that slice; any
    other cut node gets them set to ``None``. Every output node's ``metadata["budgetctx"]``
    (hidden from the LLM and the embedder) holds ``spans`` (offsets into the input node's
    text), ``source_spans`` (the same in the source document, when the node knew its
    ``start_char_idx``), ``unit_ids``, ``pinned``, ``tokens``, ``tokens_kept``,
    ``document``, ``budget``, ``tokenizer`` and ``selector``. Embeddings of cut nodes are
    dropped, since they no longer describe the text.

    >>> BudgetCtxPostprocessor(budget=10, reserve=10)
    Traceback (most recent call last):
    ...
    budgetctx._errors.InvalidParameterError: The 'reserve' parameter must be smaller than ...
    """

    # The fields (budget, tokenizer, selector, ...) and the condenser: CondenserFields.

    @classmethod
    def class_name(cls) -> str:
        return "BudgetCtxPostprocessor"

    def _postprocess_nodes(
        self,
        nodes: list[NodeWithScore],
        query_bundle: QueryBundle | None = None,
    ) -> list[NodeWithScore]:
        example = "NodeWithScore(node=TextNode(text=text))"
        require_items("BudgetCtxPostprocessor", nodes, NodeWithScore, example)
        texts = [n.node.get_content(metadata_mode=MetadataMode.NONE) for n in nodes]
        query = query_bundle.query_str if query_bundle is not None else None
        out = []
        for scored, part in zip(nodes, self._condenser(texts, query=query), strict=True):
            if self.drop_empty and not part.text:
                continue
            node = scored.node.model_copy(deep=True)
            provenance = dict(part.provenance)
            # Only TextNode knows where it lies in its source document.
            start = node.start_char_idx if isinstance(node, TextNode) else None
            if start is not None:
                provenance["source_spans"] = [
                    [start + s, start + e] for s, e in part.provenance["spans"]
                ]
            if not part.whole:
                node.set_content(part.text)
                node.embedding = None
                if isinstance(node, TextNode):
                    if part.span is not None and start is not None:
                        node.start_char_idx = start + part.span[0]
                        node.end_char_idx = start + part.span[1]
                    else:
                        node.start_char_idx = node.end_char_idx = None
            node.metadata = {**node.metadata, PROVENANCE_KEY: provenance}
            for keys in (node.excluded_llm_metadata_keys, node.excluded_embed_metadata_keys):
                if PROVENANCE_KEY not in keys:
                    keys.append(PROVENANCE_KEY)
            out.append(NodeWithScore(node=node, score=scored.score))
        return out
