"""What a browser or an unauthenticated caller may do: Host and Origin checks, JSON-only
bodies, an optional bearer token, security headers, and provenance readable by its creator.

A page on another site can make a browser POST ``text/plain`` to ``127.0.0.1`` (CSRF), or
point its own host name at it (DNS rebinding); without the checks here such a request would
be condensed and forwarded upstream with the server's own API key. So every POST must be
``application/json`` (which a browser only sends cross-origin after a CORS preflight, which
this server never grants), the ``Host`` must be an allowed name, and an ``Origin``, when sent,
must be the server's own.

Keys come from a file (one per line) or an environment variable (comma separated), are
compared in constant time, and are never logged; a caller is known by a hash of its key.

>>> cfg = SecurityConfig.from_mapping({"allowed_hosts": ["notes.internal"]})
>>> policy = Policy.build(cfg, bound_host="0.0.0.0")
>>> policy.host_allowed("notes.internal:8000"), policy.host_allowed("evil.example")
(True, False)
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from budgetctx._core.validation import Constraint, NoneOr, Predicate, short_repr, validate_fields
from budgetctx._errors import InvalidParameterError

__all__ = ["PRINCIPAL", "Guard", "Policy", "ProvenanceOwners", "SecurityConfig"]

#: The caller of the request being served: a hash of its key, or None without authentication.
PRINCIPAL: ContextVar[str | None] = ContextVar("budgetctx_principal", default=None)

_LOOPBACK = ("127.0.0.1", "localhost", "::1")
#: Routes anyone may call: a load balancer's health check and the viewer page (static).
_OPEN = {("GET", "/healthz"), ("GET", "/")}


def _str_list(value: Any) -> bool:
    return isinstance(value, list | tuple) and all(isinstance(v, str) and v for v in value)


def _env_name(value: Any) -> bool:
    return isinstance(value, str) and value.replace("_", "A").isalnum() and not value[0].isdigit()


@dataclass(frozen=True)
class SecurityConfig:
    """The ``[security]`` table.

    ``allowed_hosts``: Host names the server answers (``None``: ``budgetctx serve`` allows
    the bound address and the loopback names; ``["*"]`` turns the check off, e.g. behind a
    gateway that checks it). ``allowed_origins``: browser origins besides the server's own
    (``"https://app.internal"``). ``api_keys_file`` / ``api_keys_env``: where the bearer keys
    are (a file with one key per line, or a variable with comma-separated keys); with neither,
    no authentication (put the server behind a gateway that does it).
    """

    allowed_hosts: tuple[str, ...] | None = None
    allowed_origins: tuple[str, ...] = ()
    api_keys_file: str | None = None
    api_keys_env: str | None = None

    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "allowed_hosts": NoneOr(
            Predicate(_str_list, "a list of host names"), fix="e.g. ['notes.internal'] or ['*']."
        ),
        "allowed_origins": Predicate(
            _str_list, "a list of origins", fix="e.g. ['https://app.internal']."
        ),
        "api_keys_file": NoneOr(
            Predicate(lambda v: isinstance(v, str) and bool(v), "a file path"),
            fix="e.g. '/run/secrets/budgetctx-keys' (one key per line).",
        ),
        "api_keys_env": NoneOr(
            Predicate(_env_name, "an environment variable name"),
            fix="name the variable that holds the keys, e.g. 'BUDGETCTX_API_KEYS', not a key.",
        ),
    }

    def __post_init__(self) -> None:
        validate_fields(self)
        if self.allowed_hosts is not None:
            object.__setattr__(self, "allowed_hosts", tuple(self.allowed_hosts))
        object.__setattr__(self, "allowed_origins", tuple(self.allowed_origins))

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> SecurityConfig:
        out = dict(data)
        for key in ("allowed_hosts", "allowed_origins"):
            if isinstance(out.get(key), list):
                out[key] = tuple(out[key])
        return cls(**out)

    def keys(self) -> tuple[bytes, ...]:
        """The configured keys (read now: a bad file fails at start, naming the file only)."""
        keys: list[str] = []
        if self.api_keys_file is not None:
            try:
                lines = Path(self.api_keys_file).read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError) as exc:
                raise InvalidParameterError(
                    f"The api_keys_file {self.api_keys_file!r} cannot be read "
                    f"({type(exc).__name__}); give a readable UTF-8 file with one key per line.",
                    parameter="api_keys_file",
                    value=self.api_keys_file,
                ) from None
            keys += [k.strip() for k in lines if k.strip() and not k.startswith("#")]
        if self.api_keys_env is not None:
            keys += [k.strip() for k in os.environ.get(self.api_keys_env, "").split(",")]
        keys = [k for k in keys if k]
        if (self.api_keys_file or self.api_keys_env) and not keys:
            where = self.api_keys_file or f"${self.api_keys_env}"
            raise InvalidParameterError(
                f"Authentication is configured but {where} holds no key; put at least one key "
                "there, or remove api_keys_file/api_keys_env to run without authentication.",
                parameter="api_keys_file" if self.api_keys_file else "api_keys_env",
                value=where,
            )
        if any(len(k) < 16 for k in keys):
            raise InvalidParameterError(
                "An API key is shorter than 16 characters; use long random keys (e.g. "
                "python -c 'import secrets; print(secrets.token_urlsafe(32))').",
                parameter="api_keys_file" if self.api_keys_file else "api_keys_env",
                value="(not shown)",
            )
        return tuple(k.encode("utf-8") for k in keys)


def _host_name(host: str) -> str:
    host = host.strip().lower()
    if host.startswith("["):  # [::1]:8000
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


@dataclass(frozen=True)
class Policy:
    """The checks of one running server (its config, its bound address, its keys)."""

    hosts: frozenset[str] | None
    origins: frozenset[str]
    keys: tuple[bytes, ...] = field(repr=False)

    @classmethod
    def build(cls, config: SecurityConfig, *, bound_host: str | None) -> Policy:
        """``bound_host`` None (an app made by create_app, run by its embedder): the Host
        check applies only if ``allowed_hosts`` is configured."""
        hosts: frozenset[str] | None
        if config.allowed_hosts is not None:
            names = {h.lower() for h in config.allowed_hosts}
            hosts = None if "*" in names else frozenset(names)
        elif bound_host is None:
            hosts = None
        else:
            extra = () if bound_host in ("0.0.0.0", "::", "") else (bound_host.lower(),)
            hosts = frozenset((*_LOOPBACK, *extra))
        origins = frozenset(o.rstrip("/").lower() for o in config.allowed_origins)
        return cls(hosts=hosts, origins=origins, keys=config.keys())

    def host_allowed(self, host: str) -> bool:
        return self.hosts is None or _host_name(host) in self.hosts

    def origin_allowed(self, origin: str, host: str) -> bool:
        origin = origin.rstrip("/").lower()
        if origin in self.origins:
            return True
        # Same origin: the page was served by this server, under an allowed host name.
        match = re.fullmatch(r"https?://(.+)", origin)
        return match is not None and match.group(1) == host.strip().lower()

    def principal(self, authorization: str | None) -> str | bool | None:
        """The caller's id (a hash of its key), None when there is no authentication, or
        False when the key is missing or wrong."""
        if not self.keys:
            return None
        scheme, _, token = (authorization or "").partition(" ")
        given = token.strip().encode("utf-8", "surrogateescape")
        ok = False
        for key in self.keys:  # every key compared, in constant time each
            ok |= hmac.compare_digest(given, key)
        if scheme.lower() != "bearer" or not ok:
            return False
        return hashlib.sha256(given).hexdigest()[:32]


def _viewer_csp() -> str:
    page = resources.files("budgetctx.serve").joinpath("static", "viewer.html")
    text = page.read_text(encoding="utf-8")
    from budgetctx.build._html import _csp_hash

    scripts = re.findall(r"<script[^>]*>(.*?)</script>", text, flags=re.S)
    hashes = " ".join(_csp_hash(s) for s in scripts)
    # img-src data: is the page's empty icon (<link rel="icon" href="data:,">, which spares
    # the browser a /favicon.ico request); a data: image cannot run code.
    return (
        "default-src 'none'; style-src 'unsafe-inline'; "
        f"script-src {hashes}; connect-src 'self'; img-src 'self' data:; base-uri 'none'; "
        "form-action 'none'; frame-ancestors 'none'"
    )


_API_CSP = "default-src 'none'; frame-ancestors 'none'"
_STATIC_HEADERS = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    # Answers carry patient text: no cache (browser, proxy) may keep them.
    (b"cache-control", b"no-store"),
)
_REPLACED = {name for name, _ in _STATIC_HEADERS} | {b"content-security-policy"}


def _json_body(content_type: str | None) -> bool:
    media = (content_type or "").split(";", 1)[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


class Guard:
    """ASGI middleware: Host, Origin, content type and key checks, then security headers on
    every answer. A refusal is an :class:`~budgetctx.serve._problems.ApiError` answer."""

    def __init__(self, app: ASGIApp, policy: Policy) -> None:
        self.app = app
        self.policy = policy
        self.viewer_csp = _viewer_csp().encode("ascii")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        csp = self.viewer_csp if scope["path"] == "/" else _API_CSP.encode("ascii")

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in _REPLACED]
                message["headers"] = [*kept, *_STATIC_HEADERS, (b"content-security-policy", csp)]
            await send(message)

        refusal, principal = self.check(scope)
        if refusal is not None:
            from budgetctx.serve._logging import LOGGER, log_event

            log_event(LOGGER, "refused", level=30, status=refusal.status, kind=refusal.kind)
            await refusal.response()(scope, receive, secured)
            return
        token = PRINCIPAL.set(principal)
        try:
            await self.app(scope, receive, secured)
        finally:
            PRINCIPAL.reset(token)

    def check(self, scope: Scope) -> tuple[Any, str | None]:
        from budgetctx.serve._problems import ApiError

        headers = Headers(scope=scope)
        host = headers.get("host", "")
        if not self.policy.host_allowed(host):
            return ApiError(
                421,
                f"This server does not answer for the host {short_repr(host[:80])}; use its "
                "configured name, or add it to [security] allowed_hosts.",
                parameter="host",
                value=host[:80],
                kind="host_not_allowed",
            ), None
        origin = headers.get("origin")
        if origin is not None and not self.policy.origin_allowed(origin, host):
            return ApiError(
                403,
                f"Requests from the page origin {short_repr(origin[:80])} are refused; "
                "add it to [security] allowed_origins if it is yours.",
                parameter="origin",
                value=origin[:80],
                kind="origin_not_allowed",
            ), None
        method = scope["method"]
        if (method, scope["path"]) in _OPEN:
            return None, None
        principal = self.policy.principal(headers.get("authorization"))
        if principal is False:
            return ApiError(
                401,
                "This server needs an API key: send 'Authorization: Bearer <key>' with a key "
                "from its api_keys_file or api_keys_env.",
                parameter="authorization",
                headers={"www-authenticate": "Bearer"},
                kind="unauthorized",
            ), None
        if method in ("POST", "PUT", "PATCH") and not _json_body(headers.get("content-type")):
            ctype = headers.get("content-type")
            return ApiError(
                415,
                f"The request body must be sent as application/json, not "
                f"{short_repr(ctype[:60]) if ctype else 'without a content type'}; set "
                "'Content-Type: application/json'.",
                parameter="content-type",
                value=ctype[:60] if ctype else None,
                kind="not_json_content_type",
            ), None
        return None, principal if isinstance(principal, str) else None


class ProvenanceOwners:
    """Who created each provenance record: only that caller may read it (with keys on).

    Without authentication every caller is the same: the random 128-bit id is the secret.
    """

    def __init__(
        self, size: int, *, durable: Callable[[str], tuple[bool, str | None]] | None = None
    ) -> None:
        self._size = max(size, 1) * 2
        self._owners: OrderedDict[str, str | None] = OrderedDict()
        self._lock = threading.Lock()
        # A durable store keeps each record's owner itself: after a restart the map here is
        # empty, and a record made with a key must still be readable with that key only.
        self._durable = durable

    def claim(self, key: str | None) -> None:
        if key is None:
            return
        with self._lock:
            self._owners[key] = PRINCIPAL.get()
            while len(self._owners) > self._size:
                self._owners.popitem(last=False)

    def may_read(self, key: str) -> bool:
        with self._lock:
            if key in self._owners:
                return self._owners[key] == PRINCIPAL.get()
        if self._durable is not None:
            found, owner = self._durable(key)
            if found:
                return owner == PRINCIPAL.get()
        return PRINCIPAL.get() is None
