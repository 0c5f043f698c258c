"""The count-first exit (issue 27): whether a document, or several, fits the budget, settled by
counting the text that would be sent, before anything is segmented.

A document that fits is sent whole and verbatim, so segmenting it, counting its segments and
building each unit's provenance only serve a caller who reads ``Context.units``; the pipeline
defers them to that read (:func:`budgetctx._core.results.deferred_context`). The rule is the
pipeline's own (``_fits``), so the answer is the same as the full preparation's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from budgetctx.build._documents import Document, header_text
from budgetctx.build._prepare import Encoded, encode_texts
from budgetctx.tokenizers import Tokenizer
from budgetctx.unitizers._turns import TurnStatistics, turn_lines, turn_statistics

__all__ = ["WholeText", "combined_turns", "dialogue_turns", "whole_text"]


@dataclass(frozen=True)
class WholeText:
    """What a fitting input sends: ``text`` (the document, or the documents with their headers
    and separators), its exact count ``tokens``, and the input's count ``document_tokens`` (as
    ``Context.document_tokens``)."""

    text: str
    tokens: int
    document_tokens: int


def combined_turns(found: Sequence[tuple[int, TurnStatistics]]) -> TurnStatistics | None:
    """The dialogue statistics of several documents, weighted by length: ``found`` holds
    ``(len(text), statistics)`` of each one that is a dialogue."""
    if len(found) <= 1:
        return found[0][1] if found else None
    total = sum(n for n, _ in found)
    return TurnStatistics(
        *(
            round(sum(n * getattr(t, f) for n, t in found) / total, 6)
            for f in ("backchannel_share", "hesitation_rate", "mean_turn_words")
        )
    )


def dialogue_turns(texts: Sequence[str]) -> TurnStatistics | None:
    """The dialogue statistics of the documents ``texts`` as preparing reads them: each
    non-blank text's turns, combined."""
    found: list[tuple[int, TurnStatistics]] = []
    for t in texts:
        if t.strip():
            stats = turn_statistics(t, lines=turn_lines(t))
            if stats is not None:
                found.append((len(t), stats))
    return combined_turns(found)


def whole_text(
    tok: Tokenizer,
    text: str | None,
    documents: Sequence[Document] | None,
    capacity: int,
    *,
    separator: str,
    header: str | None,
    document_separator: str,
) -> tuple[WholeText | None, list[Encoded] | None]:
    """The whole input when it fits ``capacity`` tokens (else None; also for blank input,
    which is the pipeline's "empty input"), and each document's encoding, which preparing
    reads instead of encoding the documents again (:func:`count_segmentations`), so a text
    that does not fit costs nothing more. One text: one encoding. Several documents (``text``
    is None): each document and header on its own (the pipeline's ``document_tokens``), then,
    when the parts are close enough to fit, the combined text (the pipeline's rule for the
    merges across joins).

    >>> from budgetctx.tokenizers import get_tokenizer
    >>> whole, _ = whole_text(get_tokenizer("o200k_base"), "Chest pain. No fever.", None, 8,
    ...                       separator="\\n", header=None, document_separator="\\n")
    >>> whole.tokens
    6
    """
    if documents is None:
        assert text is not None
        if not text.strip():
            return None, None
        encoded = encode_texts(tok, [text])
        n = encoded[0][0]
        return (WholeText(text, n, n) if n <= capacity else None), encoded
    # As budgetctx.build._documents.combine lays them out: a document with no text takes no
    # room (no header, no separator); each other one is led by the separators and its header.
    leads: list[str] = []
    parts: list[str] = []
    for i, d in enumerate(documents):
        if not d.text.strip():
            continue
        head = header_text(header, d, i)
        lead = ("" if not leads else separator + document_separator) + (
            head + separator if head else ""
        )
        leads.append(lead)
        parts += (lead, d.text)
    if not leads:
        return None, None
    encoded = encode_texts(tok, [d.text for d in documents])
    document_tokens = sum(n for n, _ in encoded) + sum(tok.count_batch(leads))
    # the pipeline's rule (_fits): the parts may exceed the whole by the merges at each join
    if document_tokens > capacity + 2 * len(documents):
        return None, encoded
    combined = "".join(parts)
    exact = tok.count(combined)
    if exact > capacity:
        return None, encoded
    return WholeText(combined, exact, document_tokens), encoded
