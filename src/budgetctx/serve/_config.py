"""The server's configuration: upstream, models, limits, provenance store.

Read once at start from a TOML or JSON file (:func:`load_config`), then overridden by CLI flags.
Every field is checked with the library's one message template, so a bad file fails at start
with the key, the bad value and the fix, never on the first request.

>>> cfg = ServeConfig.from_mapping({"upstream": {"base_url": "http://127.0.0.1:9/v1"},
...                                 "models": {"gpt-4o": {"budget": 4000}}})
>>> cfg.models["gpt-4o"].budget, cfg.limits.max_documents
(4000, 64)
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

from budgetctx._core.validation import (
    Boolean,
    Constraint,
    InstanceOf,
    Interval,
    NoneOr,
    OneOf,
    Predicate,
    short_repr,
    validate_fields,
)
from budgetctx._errors import InvalidParameterError
from budgetctx.selectors import list_selectors, parse_selector_spec
from budgetctx.serve._security import SecurityConfig

__all__ = [
    "Limits",
    "ModelConfig",
    "SecurityConfig",
    "ServeConfig",
    "UpstreamConfig",
    "load_config",
]


def _is_http_url(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(("http://", "https://"))


def _is_env_name(value: Any) -> bool:
    return isinstance(value, str) and value.replace("_", "A").isalnum() and not value[0].isdigit()


def _is_selector(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    return value == "auto" or parse_selector_spec(value)[0] in list_selectors()


@dataclass(frozen=True)
class UpstreamConfig:
    """Where ``/v1/chat/completions`` is forwarded, and how it is authenticated.

    ``base_url`` is the OpenAI-style base (``https://host/v1``); with ``azure_api_version`` set
    it is the Azure resource (``https://NAME.openai.azure.com``) and requests go to
    ``/openai/deployments/{deployment}/chat/completions?api-version=...``. The key is read
    from the environment variable ``api_key_env`` when set (sent as ``Authorization: Bearer``,
    or ``api-key`` for Azure); otherwise the client's own ``Authorization``/``api-key`` header
    is passed through when ``pass_through_auth`` is true.
    """

    base_url: str
    api_key_env: str | None = None
    pass_through_auth: bool = True
    azure_api_version: str | None = None
    timeout_s: float = 60.0
    connect_timeout_s: float = 5.0
    max_connections: int = 100

    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "base_url": Predicate(
            _is_http_url, "an http:// or https:// URL", fix="e.g. 'http://127.0.0.1:8001/v1'."
        ),
        "api_key_env": NoneOr(
            Predicate(_is_env_name, "an environment variable name"),
            fix="name the variable that holds the key, e.g. 'OPENAI_API_KEY', not the key.",
        ),
        "pass_through_auth": Boolean(),
        "azure_api_version": NoneOr(InstanceOf(str, "a str"), fix="e.g. '2024-10-21'."),
        "timeout_s": Interval(float, 0, None, closed="neither", fix="e.g. 60."),
        "connect_timeout_s": Interval(float, 0, None, closed="neither", fix="e.g. 5."),
        "max_connections": Interval(int, 1, None, fix="e.g. 100."),
    }

    def __post_init__(self) -> None:
        validate_fields(self)
        object.__setattr__(self, "base_url", self.base_url.rstrip("/"))


@dataclass(frozen=True)
class ModelConfig:
    """How one model is counted and condensed.

    ``tokenizer``: a tokenizer name (or a key of ``ServeConfig.tokenizers``); by default the
    model name itself, which works for the OpenAI models the library knows (``gpt-4o``).
    ``budget``: prompt tokens above which messages are condensed (``None``: only the
    ``x-budgetctx-budget`` header triggers it). ``reserve``: tokens kept free under the budget.
    ``deployment``: the Azure deployment name (default: the model name). ``selector``: what
    condenses the messages, a selector spec (``"mmr"``, ``"mmr:lambda_=0.3"``) or ``"auto"``.
    """

    tokenizer: str | None = None
    budget: int | None = None
    reserve: int = 0
    deployment: str | None = None
    selector: str = "mmr"

    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "tokenizer": NoneOr(InstanceOf(str, "a str"), fix="e.g. 'o200k_base'."),
        "budget": NoneOr(Interval(int, 1, None), fix="e.g. 8000."),
        "reserve": Interval(int, 0, None, fix="e.g. 0."),
        "deployment": NoneOr(InstanceOf(str, "a str")),
        "selector": Predicate(
            _is_selector,
            "a selector spec or 'auto'",
            fix="e.g. 'mmr', 'mmr:lambda_=0.3' or 'auto'; see budgetctx components.",
        ),
    }

    def __post_init__(self) -> None:
        validate_fields(self)


@dataclass(frozen=True)
class Limits:
    """What one request may ask for; each breach has its own status (408, 413, 422, 503).

    ``max_connections``: open connections (more are answered 503 and closed at once);
    ``max_selections``: selections running at once, abandoned ones included (more get a 503);
    ``idle_timeout_s``: how long a connection may go without a request in progress (slow
    headers included); ``body_timeout_s``: how long reading one request body may take (408).
    Worst-case memory is about ``max_connections * max_body_bytes`` plus the selections'.
    """

    max_body_bytes: int = 8 * 1024 * 1024
    max_documents: int = 64
    selection_timeout_s: float = 30.0
    max_connections: int = 64
    max_selections: int = 4
    idle_timeout_s: float = 10.0
    body_timeout_s: float = 30.0

    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "max_body_bytes": Interval(int, 1, None, fix="e.g. 8388608 (8 MiB)."),
        "max_documents": Interval(int, 1, None, fix="e.g. 64."),
        "selection_timeout_s": Interval(float, 0, None, closed="neither", fix="e.g. 30."),
        "max_connections": Interval(int, 1, None, fix="e.g. 64."),
        "max_selections": Interval(int, 1, None, fix="e.g. 2 per core."),
        "idle_timeout_s": Interval(float, 0, None, closed="neither", fix="e.g. 10."),
        "body_timeout_s": Interval(float, 0, None, closed="neither", fix="e.g. 30."),
    }

    def __post_init__(self) -> None:
        validate_fields(self)


def _str_mapping(value: Any) -> bool:
    return isinstance(value, Mapping) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    )


def _model_mapping(value: Any) -> bool:
    return isinstance(value, Mapping) and all(
        isinstance(k, str) and isinstance(v, ModelConfig) for k, v in value.items()
    )


@dataclass(frozen=True)
class ServeConfig:
    """Everything ``budgetctx serve`` reads; :meth:`from_mapping` builds it from a parsed file.

    ``tokenizers`` names tokenizer specs a request may use besides the registered names
    (``{"llama3": "hf:/models/llama3/tokenizer.json"}``): requests can never name a file
    path themselves. ``default_tokenizer`` counts models that are neither configured nor known
    to the library (``None``: such a model gets a 400). ``provenance_size`` is how many
    provenance records are kept (0: none are kept, nothing is written). ``selection_processes``:
    how many worker processes condense (0: threads of the server process, which share one
    core's worth of Python; N uses N cores). ``provenance_store``: ``"sqlite"`` (the default)
    keeps the records in a SQLite file that survives restarts and is shared by replicas on one
    host: ``provenance_path``, by default the user's state folder
    (:func:`~budgetctx.serve._store.default_provenance_path`); offsets and counts, no text
    unless ``provenance_keep_text``; created 0600; records older than
    ``provenance_retention_s`` seconds are deleted, and beyond ``provenance_size`` the oldest.
    ``"memory"`` keeps them (with their text) in this process's memory only, lost at restart.
    ``conversations_size``:
    how many conversations' last fits are held in memory so that the next request of each
    reuses it byte for byte as its prefix while it fits (prompt caches stay warm; 0: off).
    ``anthropic_cache_breakpoint``: on ``/v1/messages``, put an ephemeral ``cache_control``
    breakpoint on the last block when the client placed none (cache writes cost more; off by
    default, and a client's own breakpoints are always passed through untouched).
    """

    upstream: UpstreamConfig | None = None
    models: Mapping[str, ModelConfig] = field(default_factory=lambda: MappingProxyType({}))
    tokenizers: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    default_tokenizer: str | None = None
    default_budget: int | None = None
    limits: Limits = field(default_factory=Limits)
    provenance_size: int = 1000
    selection_processes: int = 0
    provenance_store: str = "sqlite"
    provenance_path: str | None = None
    provenance_retention_s: float = 7 * 24 * 3600.0
    provenance_keep_text: bool = False
    conversations_size: int = 1000
    anthropic_cache_breakpoint: bool = False
    security: SecurityConfig = field(default_factory=SecurityConfig)

    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "upstream": NoneOr(InstanceOf(UpstreamConfig, "an UpstreamConfig")),
        "models": Predicate(_model_mapping, "a mapping of model names to ModelConfig"),
        "tokenizers": Predicate(
            _str_mapping,
            "a mapping of names to tokenizer specs",
            fix="e.g. {'llama3': 'hf:/models/llama3/tokenizer.json'}.",
        ),
        "default_tokenizer": NoneOr(InstanceOf(str, "a str"), fix="e.g. 'o200k_base'."),
        "default_budget": NoneOr(Interval(int, 1, None), fix="e.g. 8000."),
        "limits": InstanceOf(Limits, "a Limits"),
        "provenance_size": Interval(int, 0, None, fix="0 keeps no provenance; e.g. 1000."),
        "selection_processes": Interval(
            int, 0, None, fix="0 selects in threads of the server; e.g. the number of cores."
        ),
        "provenance_store": OneOf(
            ("sqlite", "memory"),
            fix="'sqlite' keeps records across restarts (offsets and counts, no text); "
            "'memory' keeps them in this process only.",
        ),
        "provenance_path": NoneOr(
            InstanceOf(str, "a str"), fix="e.g. '/var/lib/budgetctx/provenance.sqlite3'."
        ),
        "provenance_retention_s": Interval(float, 0, None, fix="e.g. 604800 (7 days)."),
        "provenance_keep_text": Boolean(),
        "anthropic_cache_breakpoint": Boolean(),
        "conversations_size": Interval(
            int, 0, None, fix="0 re-fits every request; e.g. 1000 conversations."
        ),
        "security": InstanceOf(SecurityConfig, "a SecurityConfig"),
    }

    def __post_init__(self) -> None:
        validate_fields(self)
        if self.provenance_store == "memory" and self.provenance_path is not None:
            raise InvalidParameterError(
                f"provenance_path is set ({self.provenance_path!r}) but provenance_store is "
                "'memory', which writes no file; set provenance_store = 'sqlite' or remove "
                "provenance_path.",
                parameter="provenance_path",
                value=self.provenance_path,
            )
        object.__setattr__(self, "models", MappingProxyType(dict(self.models)))
        object.__setattr__(self, "tokenizers", MappingProxyType(dict(self.tokenizers)))

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> ServeConfig:
        """Build from a parsed TOML/JSON document; unknown keys are refused by name."""
        data = _known(cls, data, "the configuration")
        upstream = data.get("upstream")
        if upstream is not None:
            data["upstream"] = UpstreamConfig(**_known(UpstreamConfig, upstream, "[upstream]"))
        if "limits" in data:
            data["limits"] = Limits(**_known(Limits, data["limits"], "[limits]"))
        if "security" in data:
            data["security"] = SecurityConfig.from_mapping(
                _known(SecurityConfig, data["security"], "[security]")
            )
        models = data.get("models", {})
        if not isinstance(models, Mapping):
            raise _bad_table("models", models)
        data["models"] = {
            str(name): ModelConfig(**_known(ModelConfig, spec, f"[models.{name!r}]"))
            for name, spec in models.items()
        }
        return cls(**data)

    def with_overrides(
        self,
        *,
        base_url: str | None = None,
        provenance_size: int | None = None,
        selection_processes: int | None = None,
        provenance_store: str | None = None,
        provenance_path: str | None = None,
    ) -> ServeConfig:
        """A copy with the CLI's flags applied; ``None`` leaves a setting as it is."""
        out = self
        if base_url is not None:
            upstream = (
                UpstreamConfig(base_url=base_url)
                if out.upstream is None
                else replace(out.upstream, base_url=base_url)
            )
            out = replace(out, upstream=upstream)
        if provenance_size is not None:
            out = replace(out, provenance_size=provenance_size)
        if selection_processes is not None:
            out = replace(out, selection_processes=selection_processes)
        if provenance_path is not None:
            out = replace(out, provenance_store="sqlite", provenance_path=provenance_path)
        if provenance_store is not None:
            path = None if provenance_store == "memory" else out.provenance_path
            out = replace(out, provenance_store=provenance_store, provenance_path=path)
        return out


def _bad_table(name: str, value: Any) -> InvalidParameterError:
    return InvalidParameterError(
        f"The {name!r} parameter of ServeConfig must be a table (a mapping). Got "
        f"{short_repr(value)} instead; see the serve.toml example in docs/howto/proxy.md.",
        parameter=name,
        value=short_repr(value),
    )


def _known(cls: type, data: Any, where: str) -> dict[str, Any]:
    if not isinstance(data, Mapping):
        raise _bad_table(where, data)
    names = [f.name for f in fields(cls)]
    unknown = sorted(set(data) - set(names))
    if unknown:
        raise InvalidParameterError(
            f"Unknown key {unknown[0]!r} in {where}. Valid keys are: "
            + ", ".join(repr(n) for n in names)
            + "; check its spelling.",
            parameter=unknown[0],
            value=unknown[0],
        )
    return dict(data)


def load_config(path: str | Path) -> ServeConfig:
    """Read a ``.toml`` or ``.json`` configuration file.

    TOML example::

        default_tokenizer = "o200k_base"
        [upstream]
        base_url = "https://llm.internal/v1"
        [models."gpt-4o"]
        budget = 8000
        [limits]
        max_body_bytes = 8388608
    """
    path = Path(path)
    raw = path.read_bytes()
    try:
        if path.suffix.lower() == ".json":
            data = json.loads(raw.decode("utf-8"))
        else:
            data = tomllib.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        # The parsers' messages name a line and column, never the file's content.
        raise InvalidParameterError(
            f"The configuration file {str(path)!r} could not be parsed: {exc}; fix the file "
            "(TOML unless its name ends in .json).",
            parameter="config",
            value=str(path),
        ) from exc
    return ServeConfig.from_mapping(data)
