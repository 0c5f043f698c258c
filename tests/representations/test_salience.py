"""No-query salience that filler cannot fool (issue 21)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from budgetctx import prepare
from budgetctx.representations import get_representation
from budgetctx.representations._salience import centroid_salience, filler_units, fused_salience

MEETING = "\n".join(
    [
        "Barry Hughes: Thank you.",
        "Ann Lee: The council approved the new bus route through the northern district.",
        "Barry Hughes: No.",
        "Ann Lee: Yeah.",
        "Barry Hughes: The bus route needs two more drivers before the spring timetable.",
        "Ann Lee: Thank you.",
        "Barry Hughes: Okay.",
        "Ann Lee: Funding for the drivers comes from the district transport budget.",
        "Barry Hughes: Yeah.",
    ]
    * 2
)


def test_backchannels_are_not_the_most_salient_units_of_a_meeting() -> None:
    doc = prepare(MEETING)
    r = doc.features.relevance
    top = doc.segmentation.units[int(np.argmax(r))].text
    assert "bus" in top or "drivers" in top
    short = [i for i, u in enumerate(doc.segmentation.units) if len(u.text.split()) <= 4]
    assert short and np.all(r[short] == 0)


def test_prose_keeps_plain_centroid_similarity() -> None:
    text = "Chest pain. Troponin negative. Chest pain resolved. Discharged home."
    doc = prepare(text)
    X = get_representation("tfidf").encode([u.text for u in doc.segmentation.units]).X
    c = np.asarray(X.mean(axis=0)).ravel()
    expected = np.asarray(X @ c).ravel() / np.linalg.norm(c)
    assert np.array_equal(doc.features.relevance, np.clip(expected, 0, None))
    assert filler_units(text, [u.text for u in doc.segmentation.units]) is None


def test_a_query_is_not_touched_by_the_filler_rule() -> None:
    doc = prepare(MEETING, query="thank you")
    texts = [u.text for u in doc.segmentation.units]
    assert doc.relevance_source == "query"
    assert max(doc.features.relevance[i] for i, t in enumerate(texts) if "Thank" in t) > 0


def test_filler_rows_leave_the_centroid() -> None:
    X = np.array([[1.0, 0.0], [1.0, 0.0], [0.6, 0.8]])
    r = centroid_salience(X, filler=np.array([True, True, False]))
    assert r.tolist() == [0.0, 0.0, 1.0]
    # all filler: the rule is dropped rather than leaving nothing salient
    assert np.allclose(centroid_salience(X, filler=np.ones(3, bool)), centroid_salience(X))


def test_several_documents_apply_the_rule_to_the_dialogue_only() -> None:
    from budgetctx import Document

    note = "Chest pain began Monday. Troponin negative. Discharged home."
    doc = prepare([Document(note, id="note"), Document(MEETING, id="meeting")])
    units = doc.local_units
    r = doc.features.relevance
    n_note = len(prepare(note).segmentation.units)
    assert np.all(r[:n_note] > 0)  # prose keeps its centroid similarity
    yeah = [i for i, u in enumerate(units) if i >= n_note and u.text.endswith("Yeah.")]
    assert yeah and np.all(r[yeah] == 0)


def test_a_script_keeps_its_short_lines_and_discounts_only_backchannels() -> None:
    """In written dialogue a short line carries plot; only pure acknowledgements are filler."""
    lines = [
        "OWEN : My death.",
        "ANNA : It was you.",
        "OWEN : Yes.",
        "ANNA : The brakes were cut before the bridge.",
        "OWEN : I cut them.",
        "ANNA : Why?",
        "OWEN : For the insurance money on the old farm.",
        "ANNA : Go.",
    ]
    script = "\n".join(lines * 2)
    filler = filler_units(script, lines)
    assert filler is not None and filler.tolist() == [t == "OWEN : Yes." for t in lines]
    # the same short lines in a transcribed meeting (many back-channels) are filler
    assert filler_units(MEETING, ["Ann Lee: Yeah.", "Barry Hughes: Two drivers."]).tolist() == [
        True,
        True,
    ]
    r = prepare(script).features.relevance
    units = [u.text for u in prepare(script).segmentation.units]
    assert all(r[i] > 0 for i, t in enumerate(units) if t == "OWEN : My death.")


def test_a_prepared_dialogue_reports_how_it_is_spoken_to_the_router() -> None:
    from budgetctx import Document

    stats = prepare(MEETING).stats(30)
    assert stats.backchannel_share > 0.3 and stats.mean_turn_words > 0
    prose = prepare("Chest pain began Monday. Troponin negative. Discharged home.").stats(5)
    assert (prose.backchannel_share, prose.hesitation_rate, prose.mean_turn_words) == (0, 0, 0)
    # several documents: the dialogues' statistics, weighted by length (prose adds nothing)
    both = prepare([Document("Chest pain. Troponin negative.", id="n"), Document(MEETING, id="m")])
    assert both.stats(30).backchannel_share == stats.backchannel_share


# --- fused salience (issue 21, third pass) ---------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=1, max_size=12),
    st.integers(0, 2**31 - 1),
)
def test_fused_salience_keeps_zeros_bounds_and_dominance(values: list[float], seed: int) -> None:
    from scipy import sparse

    r = np.asarray(values)
    rng = np.random.default_rng(seed)
    X = sparse.csr_matrix((rng.random((r.size, 9)) < 0.4).astype(float))
    out = fused_salience(r, X)
    assert out.shape == r.shape
    assert np.all(out[r <= 0] == 0)
    assert np.all(out >= 0) and np.all(out <= r.max() + 1e-12)
    if np.count_nonzero(r > 0) == 1:  # a single salient unit keeps its value
        assert np.allclose(out, r)
    # the order among salient units follows the rank mean: a unit that is at least as
    # central and has at least as many terms as another never scores lower
    terms = np.diff(X.indptr)
    for i in np.flatnonzero(r > 0):
        for j in np.flatnonzero(r > 0):
            if r[i] >= r[j] and terms[i] >= terms[j]:
                assert out[i] >= out[j] - 1e-12


def test_fused_salience_lifts_the_unit_that_is_both_on_topic_and_substantial() -> None:
    from scipy import sparse

    # unit 0: most central but one term ("Thank you."); unit 1: nearly as central, 6 terms
    X = sparse.csr_matrix(
        [[1, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1], [0, 1, 0, 0, 0, 0], [0, 0, 1, 1, 0, 0]]
    ).astype(float)
    r = np.array([0.9, 0.8, 0.2, 0.3])
    out = fused_salience(r, X)
    assert int(np.argmax(r)) == 0 and int(np.argmax(out)) == 1
    assert out[2] == out.min()  # off-topic and short stays last


def test_fused_salience_leaves_dense_rows_alone() -> None:
    r = np.array([0.2, 0.5, 0.0])
    assert fused_salience(r, np.ones((3, 4))).tolist() == r.tolist()
