"""Turn units: dialogue detection, turns as units, back-channels joined (issue 21)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budgetctx import build_context, prepare
from budgetctx.unitizers import SentenceUnitizer, TurnUnitizer, get_unitizer
from budgetctx.unitizers._turns import dialogue_turns, is_backchannel, strip_tags
from tests.unitizers._invariants import assert_segmentation_valid

VISIT = (
    "[doctor] Hi, how are you doing today?\n"
    "[patient] I have had chest pain since Monday. It gets worse when I climb stairs.\n"
    "[doctor] Mm-hmm.\n"
    "[doctor] Any shortness of breath or sweating with the pain?\n"
    "[patient] No.\n"
    "[patient] Some sweating, yes, mostly at night when it wakes me up.\n"
    "[doctor] Okay.\n"
)

FORMATS = {
    "bracket": VISIT,
    "name": "Barry Hughes: The budget is due on Friday.\nAnn Lee: Thank you.\n"
    "Barry Hughes: We cut the travel line by ten percent.\nAnn Lee: No.\n"
    "Barry Hughes: Next we review hiring.\nAnn Lee: Hiring waits until March.\n",
    "speaker": "SPEAKER_1: Welcome to the call.\nSPEAKER_2: Thanks.\n"
    "SPEAKER_1: The release slipped a week.\nSPEAKER_2: Why did it slip?\n"
    "SPEAKER_1: The tests were flaky.\nSPEAKER_2: Okay.\n",
    "timestamp": "00:00:01 Ann: The pump failed twice.\n00:00:05 Bob: Right.\n"
    "00:00:09 Ann: We replaced the seal.\n00:00:15 Bob: Did it hold?\n"
    "00:00:20 Ann: It held for a day.\n00:00:26 Bob: Mm.\n",
}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_every_tag_format_is_a_dialogue(fmt: str) -> None:
    text = FORMATS[fmt]
    turns = dialogue_turns(text)
    assert turns is not None
    assert len(turns) == len(text.splitlines())
    seg = TurnUnitizer().unitize(text)
    assert_segmentation_valid(text, seg)
    # back-channels never stand alone
    assert not any(is_backchannel(strip_tags(u.text)) for u in seg.units)


def test_prose_gets_exactly_the_sentence_units() -> None:
    text = "HISTORY: Chest pain. Note: seen twice.\nPLAN: Rest. Fluids.\n" * 3
    assert dialogue_turns(text) is None
    turn, sent = TurnUnitizer().unitize(text), SentenceUnitizer().unitize(text)
    assert [u.spans for u in turn.units] == [u.spans for u in sent.units]


def test_turn_is_one_unit_and_backchannel_joins_the_turn_it_answers() -> None:
    seg = TurnUnitizer().unitize(VISIT)
    texts = [u.text for u in seg.units]
    assert texts[1] == (
        "[patient] I have had chest pain since Monday. It gets worse when I climb stairs. "
        "[doctor] Mm-hmm."
    )
    assert all(t.startswith(("[doctor]", "[patient]")) for t in texts)


def test_long_turn_is_cut_between_sentences() -> None:
    long_turn = "A: " + " ".join(f"Sentence {k} has five words." for k in range(30))
    text = "\n".join([long_turn, "B: I see the point you make.", "A: Good to hear it now."] * 3)
    seg = TurnUnitizer(max_turn_words=20).unitize(text)
    assert_segmentation_valid(text, seg)
    assert max(len(u.text.split()) for u in seg.units) <= 21  # the tag is one more word


def test_registered_and_validated() -> None:
    assert get_unitizer("turn").name == "turn"
    assert get_unitizer("dialogue", max_turn_words=30).params()["max_turn_words"] == 30
    with pytest.raises(ValueError, match="max_turn_words"):
        TurnUnitizer(max_turn_words=0)


def test_budget_holds_with_turn_units() -> None:
    ctx = build_context(VISIT, 20, unitizer="turn", selector="mmr")
    assert ctx.tokens_used <= 20
    assert ctx.units and all(u.text.startswith("[") for u in ctx.units)


_LINES = st.lists(
    st.tuples(
        st.sampled_from(["Ann:", "Bob:", "[doctor]", "", "SPEAKER_3:"]),
        st.sampled_from(["Okay.", "Mm-hmm .", "The pain is worse at night.", "No. Yes.", "Why?"]),
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=40, deadline=None)
@given(_LINES)
def test_turn_units_partition_any_transcript(lines: list[tuple[str, str]]) -> None:
    text = "\n".join(f"{tag} {body}".strip() for tag, body in lines)
    assert_segmentation_valid(text, TurnUnitizer(max_turn_words=6).unitize(text))


def test_forms_and_repeated_sections_are_not_dialogues() -> None:
    flowsheet = "Day 1\nBP: 120/80\nHR: 80\nT: 37.1\n" * 4
    assert dialogue_turns(flowsheet) is None
    notes = "Nurse note: stable.\nMD note: stable overnight.\n" * 4
    assert dialogue_turns(notes) is None


SCRIPT = (
    "OWEN : My death.\nANNA : It was you.\nOWEN : The brakes were cut.\n"
    "ANNA : Who would do that?\nOWEN : Yes.\nANNA : The money was gone.\n"
    "OWEN : He took the car.\nANNA : Then we go tonight.\n"
)


def test_turn_statistics_tell_a_transcript_from_a_script() -> None:
    from budgetctx.unitizers._turns import turn_statistics

    visit = turn_statistics(VISIT + "[patient] Um, it was, uh, bad.\n")
    script = turn_statistics(SCRIPT)
    assert visit is not None and script is not None
    assert visit.spontaneous and visit.backchannel_share > 0.3 and visit.hesitation_rate > 0.01
    assert not script.spontaneous and script.hesitation_rate == 0.0
    assert script.backchannel_share == 1 / 8  # "Yes." only
    assert turn_statistics("Chest pain. Troponin negative.") is None


@pytest.mark.parametrize("unitizer", ["sentence", "turn"])
def test_units_cut_from_a_long_turn_keep_their_speaker(unitizer: str) -> None:
    long_turn = " ".join(f"The pain moved to site {k} on day {k}." for k in range(12))
    text = VISIT + f"[patient] {long_turn}\n[doctor] Thank you.\n"
    ctx = build_context(text, 150, selector="lead", unitizer=unitizer)
    assert ctx.tokens_used <= 150 and len(ctx.units) > 2
    # nothing is added to the context: the spans still give its text exactly
    assert "\n".join(text[a:b] for u in ctx.units for a, b in u.spans) == ctx.text
    for u in ctx.units:
        # the speaker is the tag of the line the unit starts in, even without a tag in its text
        line_start = text.rfind("\n", 0, u.spans[0][0]) + 1
        assert u.speaker is not None and text[line_start:].startswith(f"[{u.speaker}]")
    # every unit of the long turn, the ones after its first cut included, says who speaks
    units = prepare(text, unitizer=unitizer).segmentation.units
    cut = [u for u in units if "site" in u.text and not u.text.startswith("[")]
    assert cut and {u.speaker for u in cut} == {"patient"}
    assert build_context("Chest pain. Troponin negative.", 5).units[0].speaker is None
