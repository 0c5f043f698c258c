"""F18 and F1 in the adapters: a plain str where a framework Document is expected gets the
adapter's clear error (not an AttributeError), and a native tokenizer panic on one document
is an InputError, not a process-ending BaseException."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from budgetctx import InputError

from .._native_panic import panicking_encoder

NOTE = "Chest pain. Troponin negative. Discharged home on aspirin."
Adapter = tuple[Callable[[list[Any]], Any], Callable[[str], Any]]


@pytest.fixture
def panicking() -> Iterator[None]:
    with panicking_encoder("PANIC-ME"):
        yield


def _haystack() -> Adapter:
    pytest.importorskip("haystack")
    from haystack import Document

    from budgetctx.integrations.haystack import BudgetCtxCompressor

    comp = BudgetCtxCompressor(budget=12)
    return (lambda docs: comp.run(query="pain", documents=docs)), (lambda t: Document(content=t))


def _langchain() -> Adapter:
    pytest.importorskip("langchain_core")
    from langchain_core.documents import Document

    from budgetctx.integrations.langchain import BudgetCtxCompressor

    comp = BudgetCtxCompressor(budget=12)
    return (lambda docs: comp.compress_documents(docs, "pain")), (
        lambda t: Document(page_content=t)
    )


def _llamaindex() -> Adapter:
    pytest.importorskip("llama_index.core")
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

    from budgetctx.integrations.llamaindex import BudgetCtxPostprocessor

    post = BudgetCtxPostprocessor(budget=12)
    return (
        lambda nodes: post.postprocess_nodes(nodes, query_bundle=QueryBundle("pain")),
        lambda t: NodeWithScore(node=TextNode(text=t), score=1.0),
    )


ADAPTERS = [_haystack, _langchain, _llamaindex]
IDS = ["haystack", "langchain", "llamaindex"]


@pytest.mark.parametrize("adapter", ADAPTERS, ids=IDS)
def test_a_plain_str_gets_the_adapters_error(adapter: Callable[[], Adapter]) -> None:
    run, wrap = adapter()
    with pytest.raises(InputError, match="Document 1 is a str") as info:
        run([wrap(NOTE), NOTE])
    assert "wrap the text" in str(info.value)


@pytest.mark.parametrize("adapter", ADAPTERS, ids=IDS)
def test_a_native_panic_is_an_input_error(adapter: Callable[[], Adapter], panicking: None) -> None:
    run, wrap = adapter()
    with pytest.raises(InputError, match="native code"):
        run([wrap(NOTE), wrap("Chest pain. PANIC-ME now.")])
