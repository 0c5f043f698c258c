from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import pytest

from budgetctx._errors import InvalidParameterError, UnknownComponentError
from budgetctx.eval.datasets import list_datasets
from budgetctx.generate._base import Message
from budgetctx.generate._prompts import (
    BUILTIN_PROMPTS,
    PromptTemplate,
    get_prompt,
    list_prompts,
    load_prompt,
    prompt_for_dataset,
)

# sha256 of each built-in template's text, per id. A failure here means a template's wording
# changed: keep the old text under its old version and add the new text with version + 1
# (then add the new id here); never edit a released version in place.
PINNED = {
    "discharge-summary@v1": "47bb9d751f3380aa9abff081d748ee1225740d78ea6b4e5e529b8879162518f3",
    "conclusion@v1": "6a082137aab01deb391f4e0efd2f42aece337643cb4bf565242b9351d8800aee",
    "plain-language@v1": "563f0ad6edca4df32b0da65c9d0e0eb7242dfff669c6f26edfccf23a4d82ccfc",
    "report-summary@v1": "31067cc085b1ff8a95dd9dda8602fb9094861cb36601b3574397e6380cb54750",
    "pubmedqa@v1": "6ee5fd4e8b9f8fed062e581161e7510375c24f6ba16a8f13a78bb59073b1d20e",
}


def _text_hash(t: PromptTemplate) -> str:
    blob = json.dumps(
        [t.task, t.system, t.user, t.user_with_query, list(t.labels)],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@pytest.mark.parametrize("template", BUILTIN_PROMPTS, ids=lambda t: t.id)
def test_builtin_text_is_pinned_per_version(template: PromptTemplate) -> None:
    assert template.id in PINNED, (
        f"{template.id} is new: add its hash {_text_hash(template)} to PINNED in this file."
    )
    assert _text_hash(template) == PINNED[template.id], (
        f"The text of {template.id} changed. Bump its version (keep v{template.version} as it "
        f"was) and pin the new id with {_text_hash(template)}."
    )
    assert template.fingerprint == PINNED[template.id]


def test_every_pin_is_a_builtin() -> None:
    assert set(PINNED) == {t.id for t in BUILTIN_PROMPTS}


def test_builtin_ids_are_unique() -> None:
    ids = [t.id for t in BUILTIN_PROMPTS]
    assert len(ids) == len(set(ids))


def test_fingerprint_changes_with_text_not_with_source() -> None:
    t = get_prompt("conclusion")
    assert dataclasses.replace(t, source="elsewhere").fingerprint == t.fingerprint
    assert dataclasses.replace(t, system=t.system + " ").fingerprint != t.fingerprint
    assert dataclasses.replace(t, user=t.user + "!").fingerprint != t.fingerprint


def test_list_prompts() -> None:
    assert list_prompts() == [
        "conclusion",
        "discharge-summary",
        "plain-language",
        "pubmedqa",
        "report-summary",
    ]


def test_paper_wording_for_mimic_and_pubmedqa() -> None:
    mimic = get_prompt("discharge-summary")
    assert mimic.system == "You are a medical writer producing concise summaries."
    assert "write a brief hospital course summary" in mimic.user
    assert mimic.user.endswith("Brief Hospital Course Summary:")
    qa = get_prompt("pubmedqa")
    assert qa.task == "classify" and qa.labels == ("yes", "no", "maybe")
    assert "exactly one word: yes, no, or maybe" in qa.user
    assert qa.user.endswith("Answer (yes/no/maybe):")


def test_render_summarize() -> None:
    msgs = get_prompt("discharge-summary").render("Pt admitted with CHF. Diuresed.")
    assert [m.role for m in msgs] == ["system", "user"]
    assert all(isinstance(m, Message) for m in msgs)
    assert "Clinical Note Excerpts:\nPt admitted with CHF. Diuresed.\n\n" in msgs[1].content


def test_render_keeps_braces_in_context_verbatim() -> None:
    context = "dose {mg} and {context} and {0} and }{"
    msgs = get_prompt("report-summary").render(context)
    assert context in msgs[1].content


def test_render_classify_fills_question_and_context() -> None:
    msgs = get_prompt("pubmedqa").render("Mortality fell by 20%.", query="Does X lower mortality?")
    user = msgs[1].content
    assert "Context:\nMortality fell by 20%." in user
    assert "Question: Does X lower mortality?" in user
    assert user.index("Context:") < user.index("Question:")


@pytest.mark.parametrize("query", [None, "", "   "])
def test_classify_without_query_is_refused_with_fix(query: str | None) -> None:
    with pytest.raises(InvalidParameterError, match="needs a question") as info:
        get_prompt("pubmedqa").render("ctx", query=query)
    assert "render(context, query=" in str(info.value)
    assert info.value.parameter == "query"


def test_summarize_with_query_uses_query_form() -> None:
    msgs = get_prompt("report-summary").render("Minutes ...", query="What did they decide?")
    assert "Instruction: What did they decide?" in msgs[1].content
    assert "Minutes ..." in msgs[1].content


def test_summarize_template_without_query_form_refuses_query() -> None:
    with pytest.raises(InvalidParameterError, match="report-summary") as info:
        get_prompt("conclusion").render("ctx", query="Why did Mr. Quimby fall?")
    assert "Quimby" not in str(info.value) and "Quimby" not in str(info.value.value)


def test_render_rejects_non_string_context() -> None:
    with pytest.raises(InvalidParameterError, match=r"Context\.text"):
        get_prompt("conclusion").render(["a", "b"])  # type: ignore[arg-type]


def test_render_does_not_mutate_template() -> None:
    t = get_prompt("pubmedqa")
    before = t.to_dict()
    t.render("ctx", query="q?")
    assert t.to_dict() == before
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.user = "x"  # type: ignore[misc]


def test_empty_system_sends_only_user_message() -> None:
    t = PromptTemplate("bare", 1, "summarize", "", "Summarize: {context}")
    assert t.render("abc") == [Message("user", "Summarize: abc")]


def test_id_and_to_dict_round_trip(tmp_path: Path) -> None:
    t = get_prompt("pubmedqa")
    d = t.to_dict()
    assert d["id"] == "pubmedqa@v1" and d["labels"] == ["yes", "no", "maybe"]
    path = tmp_path / "p.json"
    path.write_text(json.dumps(d), encoding="utf-8")
    assert get_prompt(str(path)) == t


def test_get_prompt_by_pinned_id_and_instance() -> None:
    t = get_prompt("conclusion@v1")
    assert t.id == "conclusion@v1"
    assert get_prompt(t) is t
    assert get_prompt("CONCLUSION") == t


def test_unknown_prompt_lists_names() -> None:
    with pytest.raises(UnknownComponentError) as info:
        get_prompt("sumarize")
    message = str(info.value)
    assert "'discharge-summary'" in message and ".json/.toml" in message


def test_unknown_version_lists_versions() -> None:
    with pytest.raises(UnknownComponentError, match="conclusion@v1"):
        get_prompt("conclusion@v9")


def test_load_prompt_toml(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text(
        'name = "mine"\nversion = 3\ntask = "classify"\nsystem = "Be terse."\n'
        'user = """Q: {question}\nC: {context}\nAnswer:"""\nlabels = ["a", "b"]\n',
        encoding="utf-8",
    )
    t = get_prompt(str(path))
    assert t.id == "mine@v3" and t.labels == ("a", "b")
    assert t.render("ctx", query="q")[1].content == "Q: q\nC: ctx\nAnswer:"
    assert str(path) in t.source


def test_load_prompt_rejects_edited_text_with_old_fingerprint(tmp_path: Path) -> None:
    d = get_prompt("conclusion").to_dict()
    d["user"] = d["user"].replace("brief", "short")
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(d), encoding="utf-8")
    with pytest.raises(InvalidParameterError, match="Bump 'version'"):
        load_prompt(path)


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "holds a list"),
        ('{"name": "x", "version": 1, "task": "summarize"}', "missing key"),
        (
            '{"name": "x", "version": 1, "task": "summarize", "user": "{context}", "typo": 1}',
            "unknown key",
        ),
        ('{"name": "x", "version": 0, "task": "summarize", "user": "{context}"}', "version"),
        ('{"name": "x", "version": 1, "task": "summarize", "user": "no slot"}', "{context}"),
    ],
)
def test_malformed_prompt_file_names_file(tmp_path: Path, content: str, match: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InvalidParameterError, match=match) as info:
        get_prompt(str(path))
    assert "bad.json" in str(info.value)


def test_missing_prompt_file() -> None:
    with pytest.raises(InvalidParameterError, match="Cannot read the prompt file"):
        get_prompt("no/such/prompt.json")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"user": "{context} {other}"}, "unknown placeholder"),
        ({"user": "{context"}, "not a valid str.format"),
        ({"task": "translate"}, "'task'"),
        ({"version": True}, "'version'"),
        ({"name": "a@b"}, "The 'name' parameter of PromptTemplate must be a non-empty str without"),
        ({"labels": "yes"}, "'labels' parameter of PromptTemplate must be a sequence of str"),
        ({"system": None}, "'system' parameter of PromptTemplate must be a str"),
        ({"user": "{context} {question}"}, "user_with_query"),
        ({"user_with_query": "{context} only"}, "both"),
    ],
)
def test_invalid_summarize_templates(kwargs: dict[str, object], match: str) -> None:
    base: dict[str, object] = {
        "name": "t",
        "version": 1,
        "task": "summarize",
        "system": "",
        "user": "{context}",
    }
    with pytest.raises(InvalidParameterError, match=match):
        PromptTemplate(**{**base, **kwargs})  # type: ignore[arg-type]


def test_invalid_classify_templates() -> None:
    with pytest.raises(InvalidParameterError, match=r"\{question\}"):
        PromptTemplate("c", 1, "classify", "", "{context}", labels=("yes", "no"))
    with pytest.raises(InvalidParameterError, match="distinct labels"):
        PromptTemplate("c", 1, "classify", "", "{context}{question}", labels=("yes", "YES"))
    with pytest.raises(InvalidParameterError, match="distinct labels"):
        PromptTemplate("c", 1, "classify", "", "{context}{question}")


@pytest.mark.parametrize(
    ("dataset", "prompt"),
    [
        ("mtsamples", "discharge-summary"),
        ("mimic-bhc", "discharge-summary"),
        ("cochrane", "conclusion"),
        ("cochrane-pls", "plain-language"),
        ("pubmedqa", "pubmedqa"),
        ("leval", "report-summary"),
        ("leval:meeting_summ", "report-summary"),
        ("leval:gov_report_summ", "report-summary"),
        ("jsonl", "report-summary"),
        ("csv", "report-summary"),
        ("something-else", "report-summary"),
        ("MIMIC-BHC", "discharge-summary"),
    ],
)
def test_prompt_for_dataset(dataset: str, prompt: str) -> None:
    assert prompt_for_dataset(dataset) == prompt


def test_every_registered_dataset_maps_to_a_builtin_prompt() -> None:
    for name in list_datasets():
        assert prompt_for_dataset(name) in list_prompts()
