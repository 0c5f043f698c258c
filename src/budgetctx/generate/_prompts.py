"""Prompt templates: versioned, hashable, rendered into chat messages.

A template's ``id`` (``"discharge-summary@v1"``) is recorded with every generation, so a run can
be traced to the exact wording. Editing a template's text without bumping ``version`` fails the
test suite (the text is pinned by :attr:`PromptTemplate.fingerprint`).

The summarization wordings follow the paper's released code (``full_budgeter.py``: the MIMIC
"brief hospital course" prompt and the Cochrane "conclusion" prompt, system message "You are a
medical writer producing concise summaries.") and the PubMedQA prompt follows
``full_budgeter_pubmedqa.py``; ``plain-language`` and ``report-summary`` are ours.

>>> t = get_prompt("pubmedqa")
>>> t.id, t.labels
('pubmedqa@v1', ('yes', 'no', 'maybe'))
>>> [m.role for m in t.render("Aspirin lowered the rate.", query="Does aspirin help?")]
['system', 'user']
"""

from __future__ import annotations

import hashlib
import json
import string
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal, get_args

from budgetctx._core.validation import (
    Constraint,
    InstanceOf,
    Interval,
    OneOf,
    Predicate,
    validate_fields,
)
from budgetctx._errors import InvalidParameterError, UnknownComponentError
from budgetctx.generate._base import Message

__all__ = [
    "BUILTIN_PROMPTS",
    "PromptTemplate",
    "Task",
    "get_prompt",
    "list_prompts",
    "load_prompt",
    "prompt_for_dataset",
]

Task = Literal["summarize", "classify"]
_TASKS: tuple[str, ...] = get_args(Task)
_FIELDS = frozenset({"context", "question"})


def _placeholders(template: str, *, what: str) -> set[str]:
    try:
        names = {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    except ValueError as exc:
        raise InvalidParameterError(
            f"The {what} template is not a valid str.format template ({exc}). "
            "Write literal braces as '{{' and '}}'.",
            parameter=what,
            value=template,
        ) from exc
    unknown = names - _FIELDS
    if unknown:
        raise InvalidParameterError(
            f"The {what} template uses unknown placeholder(s) {sorted(unknown)}. Only "
            "{context} and {question} are filled in; write literal braces as '{{' and '}}'.",
            parameter=what,
            value=template,
        )
    return names


@dataclass(frozen=True)
class PromptTemplate:
    """A system message and a ``str.format`` user template with ``{context}`` (and
    ``{question}`` for classification, or in ``user_with_query`` for query-focused summaries).

    >>> t = PromptTemplate("tiny", 1, "summarize", "Be brief.", "Summarize:\\n{context}")
    >>> t.id, t.render("A. B.")[1].content
    ('tiny@v1', 'Summarize:\\nA. B.')
    """

    name: str
    version: int
    task: Task
    system: str
    user: str
    labels: tuple[str, ...] = ()
    #: used instead of ``user`` when a summarization prompt is given a query (L-Eval
    #: instructions); empty means the template does not take one
    user_with_query: str = ""
    #: where the wording comes from (not part of the fingerprint)
    source: str = ""

    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "name": Predicate(
            lambda v: isinstance(v, str) and bool(v.strip()) and "@" not in v,
            "a non-empty str without '@'",
            fix="e.g. 'discharge-summary' ('@' separates name and version in an id).",
        ),
        "version": Interval(int, 1, None, fix="bump it whenever the wording changes."),
        "task": OneOf(_TASKS),
        "system": InstanceOf(str, "a str", fix="'' for no system message."),
        "user": InstanceOf(str, "a str", fix="a str.format template with {context}."),
        "labels": Predicate(
            lambda v: not isinstance(v, str | bytes) and all(isinstance(x, str) for x in v),
            "a sequence of str",
            fix="e.g. ('yes', 'no', 'maybe').",
        ),
        "user_with_query": InstanceOf(str, "a str", fix="'' when the prompt takes no query."),
        "source": InstanceOf(str, "a str"),
    }

    def __post_init__(self) -> None:
        validate_fields(self)
        object.__setattr__(self, "labels", tuple(self.labels))
        user_fields = _placeholders(self.user, what="user")
        if "context" not in user_fields:
            raise InvalidParameterError(
                f"The user template of prompt {self.name!r} has no {{context}} placeholder; "
                "add one where the selected context goes.",
                parameter="user",
                value=self.user,
            )
        if self.task == "classify":
            if "question" not in user_fields:
                raise InvalidParameterError(
                    f"The classify prompt {self.name!r} has no {{question}} placeholder in its "
                    "user template; add one where the question goes.",
                    parameter="user",
                    value=self.user,
                )
            if len(self.labels) < 2 or len({lab.lower() for lab in self.labels}) != len(
                self.labels
            ):
                raise InvalidParameterError(
                    f"The classify prompt {self.name!r} needs two or more distinct labels. Got "
                    f"{list(self.labels)!r} instead; pass labels=('yes', 'no', 'maybe').",
                    parameter="labels",
                    value=list(self.labels),
                )
        elif "question" in user_fields:
            raise InvalidParameterError(
                f"The summarize prompt {self.name!r} has {{question}} in its user template; put "
                "the query form in user_with_query so the template also works without one.",
                parameter="user",
                value=self.user,
            )
        if self.user_with_query:
            if self.task == "classify":
                raise InvalidParameterError(
                    f"The classify prompt {self.name!r} already takes the question in its user "
                    "template; leave user_with_query empty.",
                    parameter="user_with_query",
                    value=self.user_with_query,
                )
            if _placeholders(self.user_with_query, what="user_with_query") != _FIELDS:
                raise InvalidParameterError(
                    f"The user_with_query template of prompt {self.name!r} must contain both "
                    "{context} and {question}.",
                    parameter="user_with_query",
                    value=self.user_with_query,
                )

    @property
    def id(self) -> str:
        """``name@vVERSION``, recorded with each generation."""
        return f"{self.name}@v{self.version}"

    @property
    def fingerprint(self) -> str:
        """sha256 of everything that changes what the model is sent (not name or source)."""
        blob = json.dumps(
            [self.task, self.system, self.user, self.user_with_query, list(self.labels)],
            ensure_ascii=False,
            separators=(",", ":"),
        )
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def render(self, context: str, *, query: str | None = None) -> list[Message]:
        """The chat messages for one context (and question, for classification)."""
        if not isinstance(context, str):
            raise InvalidParameterError(
                f"The context must be a str. Got {type(context).__name__} instead; pass "
                "Context.text.",
                parameter="context",
                value=type(context).__name__,
            )
        if query is not None and not isinstance(query, str):
            raise InvalidParameterError(
                f"The query must be a str or None. Got {type(query).__name__} instead.",
                parameter="query",
                value=type(query).__name__,
            )
        has_query = query is not None and query.strip() != ""
        if self.task == "classify":
            if not has_query:
                raise InvalidParameterError(
                    f"The classify prompt {self.id!r} needs a question. Got query={query!r}; "
                    "pass render(context, query='Does X reduce Y?').",
                    parameter="query",
                    value=query,
                )
            user = self.user.format(context=context, question=query)
        elif has_query:
            if not self.user_with_query:
                # the query is described, not quoted: it is the user's text
                n = len(query or "")
                raise InvalidParameterError(
                    f"The prompt {self.id!r} does not take a query (got one of {n} characters). "
                    "Use a query-focused prompt such as 'report-summary', or drop the query.",
                    parameter="query",
                    value=f"{n} characters",
                )
            user = self.user_with_query.format(context=context, question=query)
        else:
            user = self.user.format(context=context)
        messages = [Message("system", self.system)] if self.system else []
        messages.append(Message("user", user))
        return messages

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; :func:`load_prompt` reads it back."""
        return {
            "id": self.id,
            "name": self.name,
            "version": self.version,
            "task": self.task,
            "system": self.system,
            "user": self.user,
            "user_with_query": self.user_with_query,
            "labels": list(self.labels),
            "source": self.source,
            "fingerprint": self.fingerprint,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "prompt dict") -> PromptTemplate:
        """Build a template from :meth:`to_dict` output (``id`` and ``fingerprint`` are
        checked when present)."""
        known = {"name", "version", "task", "system", "user", "user_with_query", "labels"}
        known |= {"source", "id", "fingerprint"}
        unknown = sorted(set(data) - known)
        missing = sorted({"name", "version", "task", "user"} - set(data))
        if unknown or missing:
            problem = f"unknown key(s) {unknown}" if unknown else f"missing key(s) {missing}"
            raise InvalidParameterError(
                f"{source} is not a prompt template ({problem}). It needs name, version, task "
                "and user; system, user_with_query, labels and source are optional.",
                parameter="prompt",
                value=source,
            )
        labels = data.get("labels", ())
        if isinstance(labels, str) or not isinstance(labels, list | tuple):
            raise InvalidParameterError(
                f"{source}: 'labels' must be a list of strings. Got {labels!r} instead.",
                parameter="prompt",
                value=source,
            )
        texts = {k: data.get(k, "") for k in ("system", "user", "user_with_query", "source")}
        bad = [k for k, v in texts.items() if not isinstance(v, str)]
        if bad or not all(isinstance(lab, str) for lab in labels):
            raise InvalidParameterError(
                f"{source}: {bad or ['labels']} must hold strings.",
                parameter="prompt",
                value=source,
            )
        try:
            template = cls(
                name=data["name"],
                version=data["version"],
                task=data["task"],
                system=texts["system"],
                user=texts["user"],
                labels=tuple(labels),
                user_with_query=texts["user_with_query"],
                source=texts["source"] or source,
            )
        except InvalidParameterError as exc:
            raise InvalidParameterError(
                f"{source}: {exc}", parameter="prompt", value=source
            ) from exc
        if "id" in data and data["id"] != template.id:
            raise InvalidParameterError(
                f"{source}: 'id' is {data['id']!r} but name and version give {template.id!r}; "
                "remove 'id' or make them agree.",
                parameter="prompt",
                value=source,
            )
        if "fingerprint" in data and data["fingerprint"] != template.fingerprint:
            raise InvalidParameterError(
                f"{source}: the text of {template.id!r} was edited after its fingerprint was "
                "written. Bump 'version' and remove 'fingerprint' (it is recomputed).",
                parameter="prompt",
                value=source,
            )
        return template


_PAPER_CODE = "https://github.com/stone-technologies/ACL_budget_paper"
_MEDICAL_WRITER = "You are a medical writer producing concise summaries."

BUILTIN_PROMPTS: tuple[PromptTemplate, ...] = (
    PromptTemplate(
        name="discharge-summary",
        version=1,
        task="summarize",
        system=_MEDICAL_WRITER,
        user=(
            "Based on the following clinical note excerpts, write a brief hospital course "
            "summary.\nBe concise and focus on the key clinical events, diagnoses, treatments, "
            "and outcomes.\n\nClinical Note Excerpts:\n{context}\n\n"
            "Brief Hospital Course Summary:"
        ),
        source=f"paper code, MIMIC prompt ({_PAPER_CODE} full_budgeter.py)",
    ),
    PromptTemplate(
        name="conclusion",
        version=1,
        task="summarize",
        system=_MEDICAL_WRITER,
        user=(
            "Based on the following abstract excerpts, write a brief conclusion.\nFocus on the "
            "main findings and implications.\n\nAbstract Excerpts:\n{context}\n\nConclusion:"
        ),
        source=f"paper code, Cochrane prompt ({_PAPER_CODE} full_budgeter.py)",
    ),
    PromptTemplate(
        name="plain-language",
        version=1,
        task="summarize",
        system=(
            "You are a medical writer who explains health research to the public in plain language."
        ),
        user=(
            "Based on the following excerpts from a Cochrane review abstract, write a "
            "plain-language summary for a general audience.\nUse short sentences and everyday "
            "words, explain any medical terms, and say what the evidence shows and how certain "
            "it is.\n\nAbstract Excerpts:\n{context}\n\nPlain-Language Summary:"
        ),
        source="budgetctx (the paper has no plain-language task)",
    ),
    PromptTemplate(
        name="report-summary",
        version=1,
        task="summarize",
        system="You are a careful writer producing concise, faithful summaries.",
        user=(
            "Based on the following document excerpts, write a concise summary.\nFocus on the "
            "main points, key facts, and conclusions; do not add information that is not in "
            "the excerpts.\n\nDocument Excerpts:\n{context}\n\nSummary:"
        ),
        user_with_query=(
            "Based on the following document excerpts, follow the instruction below.\nUse only "
            "information in the excerpts.\n\nDocument Excerpts:\n{context}\n\n"
            "Instruction: {question}\n\nResponse:"
        ),
        source="budgetctx, modelled on the paper's summarization prompts",
    ),
    PromptTemplate(
        name="pubmedqa",
        version=1,
        task="classify",
        system=(
            "You are a biomedical research assistant. Answer the question based only on the "
            "provided context. Respond with exactly one word: yes, no, or maybe."
        ),
        user=(
            "Based on the following biomedical abstract excerpts, answer the research "
            "question.\nYou must respond with exactly one word: yes, no, or maybe.\n\n"
            "Context:\n{context}\n\nQuestion: {question}\n\nAnswer (yes/no/maybe):"
        ),
        labels=("yes", "no", "maybe"),
        source=f"paper code, PubMedQA prompt ({_PAPER_CODE} full_budgeter_pubmedqa.py)",
    ),
)

_BY_NAME: dict[str, dict[int, PromptTemplate]] = {}
for _t in BUILTIN_PROMPTS:
    _BY_NAME.setdefault(_t.name, {})[_t.version] = _t


def list_prompts() -> list[str]:
    """Names of the built-in prompts (each resolves to its newest version).

    >>> list_prompts()
    ['conclusion', 'discharge-summary', 'plain-language', 'pubmedqa', 'report-summary']
    """
    return sorted(_BY_NAME)


def load_prompt(path: str | Path) -> PromptTemplate:
    """Read a template from a ``.json`` or ``.toml`` file (the keys of ``to_dict()``)."""
    p = Path(path).expanduser()
    source = repr(str(p))
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise InvalidParameterError(
            f"Cannot read the prompt file {source} ({exc.strerror or exc}). Check the path.",
            parameter="prompt",
            value=str(p),
        ) from exc
    try:
        text = raw.decode("utf-8")
        data = tomllib.loads(text) if p.suffix.lower() == ".toml" else json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        kind = "TOML" if p.suffix.lower() == ".toml" else "JSON"
        raise InvalidParameterError(
            f"The prompt file {source} is not valid {kind} ({exc}). Fix it, or write one with "
            "json.dump(template.to_dict(), fh).",
            parameter="prompt",
            value=str(p),
        ) from exc
    if not isinstance(data, dict):
        raise InvalidParameterError(
            f"The prompt file {source} holds a {type(data).__name__}, not an object with "
            "name, version, task and user.",
            parameter="prompt",
            value=str(p),
        )
    return PromptTemplate.from_dict(data, source=source)


def _looks_like_path(spec: str) -> bool:
    return spec.lower().endswith((".json", ".toml")) or "/" in spec or "\\" in spec


def get_prompt(spec: str | PromptTemplate, /) -> PromptTemplate:
    """A template from a built-in name (``"pubmedqa"``, newest version), a pinned id
    (``"pubmedqa@v1"``), a ``.json``/``.toml`` file path, or a template instance.

    >>> get_prompt("conclusion@v1").task
    'summarize'
    """
    if isinstance(spec, PromptTemplate):
        return spec
    if not isinstance(spec, str):
        raise InvalidParameterError(
            f"A prompt must be a name, an id like 'pubmedqa@v1', a file path or a "
            f"PromptTemplate. Got {type(spec).__name__} instead.",
            parameter="prompt",
            value=repr(spec),
        )
    name, sep, version = spec.strip().lower().partition("@")
    if name in _BY_NAME:
        versions = _BY_NAME[name]
        if not sep:
            return versions[max(versions)]
        wanted = version[1:] if version.startswith("v") else version
        if wanted.isdigit() and int(wanted) in versions:
            return versions[int(wanted)]
        raise UnknownComponentError("prompt", spec, [t.id for t in versions.values()])
    if _looks_like_path(spec) or Path(spec).expanduser().is_file():
        return load_prompt(spec)
    err = UnknownComponentError("prompt", spec, list_prompts())
    err.args = (f"{err.args[0]} Or pass a path to a .json/.toml template file.",)
    raise err


_DATASET_PROMPTS = {
    "mtsamples": "discharge-summary",
    "mimic-bhc": "discharge-summary",
    "cochrane": "conclusion",
    "cochrane-pls": "plain-language",
    "pubmedqa": "pubmedqa",
}


def prompt_for_dataset(dataset: str) -> str:
    """The default prompt name for a budgetctx dataset; L-Eval, your own jsonl/csv files and
    anything unknown get ``"report-summary"``.

    >>> prompt_for_dataset("mimic-bhc"), prompt_for_dataset("leval:news_summ")
    ('discharge-summary', 'report-summary')
    """
    return _DATASET_PROMPTS.get(dataset.strip().lower(), "report-summary")
