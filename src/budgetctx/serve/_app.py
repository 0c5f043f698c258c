"""``create_app``: the HTTP API and the OpenAI-compatible proxy, on FastAPI.

Routes: ``POST /v1/context`` (one document or a list), ``POST /v1/contexts`` (a batch),
``POST /v1/chat/completions``, ``POST /v1/responses`` and ``POST /v1/messages`` (Anthropic)
(count, condense over budget, forward), ``GET /v1/provenance/{id}``, ``GET /healthz``,
``GET /metrics`` and ``GET /`` (the viewer page).
Selection runs in a worker thread under the configured timeout, so the event loop keeps
serving other requests while one document is being condensed.

>>> from budgetctx.serve import ServeConfig, create_app
>>> app = create_app(ServeConfig(provenance_size=0))
>>> paths = sorted({r.path for r in app.routes if r.path.startswith("/v1/")})
>>> paths  # doctest: +NORMALIZE_WHITESPACE
['/v1/chat/completions', '/v1/context', '/v1/contexts', '/v1/messages',
 '/v1/provenance/{id}', '/v1/responses']
"""

from __future__ import annotations

import asyncio
import functools
import json
import multiprocessing
import os
import time
import uuid
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import asynccontextmanager
from importlib import resources
from typing import Any, TypeVar, cast

import anyio
import anyio.to_thread
from fastapi import FastAPI, Request
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from budgetctx import BudgetCtxError, FittedMessages, __version__
from budgetctx.serve._anthropic import IMAGE_TOKENS, place_breakpoint, to_chat
from budgetctx.serve._anthropic import apply_fitted as apply_anthropic
from budgetctx.serve._config import ServeConfig
from budgetctx.serve._conversations import ConversationCache, stable_fit_job
from budgetctx.serve._jobs import (
    Outcome,
    call,
    context_job,
    contexts_job,
    init_worker,
    load_tokenizer,
    warm_job,
)
from budgetctx.serve._limits import SelectionSlots, Ticket, read_json
from budgetctx.serve._logging import LOGGER, log_event
from budgetctx.serve._metrics import CONTENT_TYPE, Metrics
from budgetctx.serve._models import ModelTarget, Resolver
from budgetctx.serve._problems import ApiError, bad_parameter, from_library
from budgetctx.serve._provenance import ProvenanceStore
from budgetctx.serve._proxy import Upstream
from budgetctx.serve._requests import ContextRequest, parse_context_request
from budgetctx.serve._responses import apply_fitted, to_messages
from budgetctx.serve._security import PRINCIPAL, Guard, Policy, ProvenanceOwners
from budgetctx.serve._store import SqliteProvenanceStore, default_provenance_path
from budgetctx.tokenizers import is_exact

__all__ = ["create_app"]

T = TypeVar("T")

_ROUTES = (
    "/",
    "/healthz",
    "/metrics",
    "/v1/context",
    "/v1/contexts",
    "/v1/chat/completions",
    "/v1/responses",
    "/v1/messages",
)
_BUDGET_HEADER = "x-budgetctx-budget"


class _State:
    """What the handlers share: configuration, tokenizers, provenance, metrics, upstream."""

    def __init__(self, config: ServeConfig, *, bound_host: str | None = None) -> None:
        self.config = config
        self.policy = Policy.build(config.security, bound_host=bound_host)
        self.slots = SelectionSlots(config.limits.max_selections)
        self.resolver = Resolver(config)
        self.store: ProvenanceStore | SqliteProvenanceStore
        if config.provenance_store == "sqlite" and config.provenance_size > 0:
            self.store = SqliteProvenanceStore(
                config.provenance_path or default_provenance_path(),
                retention_s=config.provenance_retention_s,
                max_records=config.provenance_size,
                keep_text=config.provenance_keep_text,
            )
            self.owners = ProvenanceOwners(config.provenance_size, durable=self.store.owner_of)
        else:
            self.store = ProvenanceStore(size=config.provenance_size)
            self.owners = ProvenanceOwners(config.provenance_size)
        self.metrics = Metrics()
        self.conversations = ConversationCache(size=config.conversations_size)
        self.upstream = Upstream(config.upstream) if config.upstream is not None else None
        self.pool: ProcessPoolExecutor | None = None
        self._warming: asyncio.Future[None] | None = None
        if config.selection_processes > 0:
            self.pool = self._new_pool()

    def _new_pool(self) -> ProcessPoolExecutor:
        # spawn, not fork: the server process has threads (the event loop's helpers)
        return ProcessPoolExecutor(
            self.config.selection_processes,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=init_worker,
            initargs=(os.getpid(),),
        )

    def recycle_pool(self) -> None:
        """Kill the worker processes, the one way to stop an abandoned selection (a thread
        cannot be stopped), and start new ones. Selections in flight in the old pool end
        with a 503 their clients can retry."""
        old = self.pool
        if old is None:
            return
        self.pool = self._new_pool()
        # ProcessPoolExecutor has no public way to stop a running task: kill its processes.
        for process in list(getattr(old, "_processes", {}).values()):
            process.kill()
        old.shutdown(wait=False, cancel_futures=True)
        # Start and warm the new workers now, not on the next request's time. A timeout
        # shorter than a worker's cold start would stop each new pool in turn: keep
        # selection_timeout_s well above it (seconds; see SECURITY.md).
        self._warming = asyncio.ensure_future(self.warm())
        # A warm-up cut short (the server stopping) is no error to report.
        self._warming.add_done_callback(lambda f: f.cancelled() or f.exception())

    async def warm(self) -> None:
        """Start every worker process and build what a first request would."""
        if self.pool is not None:
            n = self.config.selection_processes
            await asyncio.gather(*(self._submit(warm_job) for _ in range(n)))

    async def _submit(
        self, fn: Callable[..., T], *args: Any, submitted: list[bool] | None = None
    ) -> Outcome:
        # A slot is held until the work really ends, abandoned or not (see _limits).
        ticket = await self.slots.acquire()
        try:
            if self.pool is None:
                work = functools.partial(_ticketed, ticket, call, fn, *args)
                return cast(Outcome, await anyio.to_thread.run_sync(work, abandon_on_cancel=True))
            future = self.pool.submit(call, fn, *args)
            if submitted is not None:
                submitted.append(True)
            ticket.start()
            future.add_done_callback(lambda _: ticket.done())
            try:
                return await asyncio.wrap_future(future)
            except BrokenProcessPool:
                raise ApiError(
                    503,
                    "The selection's worker process was stopped (a worker was killed, or "
                    "another selection past its timeout was stopped with it); retry the request.",
                    headers={"retry-after": "1"},
                    kind="worker_stopped",
                ) from None
        finally:
            ticket.abandon()  # a no-op once the work has started: it frees the slot itself

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in a worker thread or process, abandoned with a 503 past the selection
        timeout; a refusal in the worker is raised here as the same :class:`ApiError`."""
        timeout = self.config.limits.selection_timeout_s
        submitted: list[bool] = []
        try:
            with anyio.fail_after(timeout):
                outcome = await self._submit(fn, *args, submitted=submitted)
        except TimeoutError:
            # Processes can be stopped, and are: the abandoned selection's CPU and memory
            # come back at once. A thread keeps running, holding its slot (see _limits).
            if submitted:
                self.recycle_pool()
            raise ApiError(
                503,
                f"Selection took longer than {timeout:g} s (waiting for one of the "
                f"{self.slots.size} selection slots, then running) and was abandoned; send a "
                "shorter document or a smaller request, choose a faster selector (e.g. "
                "'lead'), retry shortly, or raise limits.selection_timeout_s.",
                headers={"retry-after": "1"},
                kind="selection_timeout",
            ) from None
        return cast(T, unwrap(outcome))

    async def body(self, request: Request) -> Any:
        """The request's JSON, read up to the body limit (413), in time (408), refusing
        what the library cannot take (422) and what is not JSON (400): see _limits."""
        limits = self.config.limits
        return await read_json(request, limit=limits.max_body_bytes, timeout=limits.body_timeout_s)


def _ticketed(ticket: Ticket, fn: Callable[..., Outcome], *args: Any) -> Outcome:
    if not ticket.start():  # the request gave up before this thread started
        return ("crash", "Abandoned")
    try:
        return fn(*args)
    finally:
        ticket.done()


class WorkerError(Exception):
    """A selection worker failed with an unexpected exception (only its class is known)."""


def unwrap(outcome: Outcome) -> Any:
    """The result of :func:`~budgetctx.serve._jobs.call`, or its error raised again."""
    if outcome[0] == "ok":
        return outcome[1]
    if outcome[0] == "error":
        _, status, body, kind = outcome
        raise ApiError(
            status, body["error"], parameter=body["parameter"], value=body["value"], kind=kind
        )
    raise WorkerError(outcome[1])


def _route(path: str) -> str:
    if path.startswith("/v1/provenance/"):
        return "/v1/provenance/{id}"
    return path if path in _ROUTES else "other"


class _Observe:
    """Request id, latency, metrics and one log line per request; a crash becomes a 500.

    Starlette's own last-resort handler would log the exception with its message, which may
    quote the request; this one logs only the exception's class.
    """

    def __init__(self, app: ASGIApp, state: _State) -> None:
        self.app = app
        self.state = state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        request_id = uuid.uuid4().hex[:16]
        route = _route(scope["path"])
        status = 500
        started = False

        async def send_wrapper(message: Message) -> None:
            nonlocal status, started
            if message["type"] == "http.response.start":
                started = True
                status = int(message["status"])
                tag = (b"x-budgetctx-request-id", request_id.encode())
                message["headers"] = [*message.get("headers", []), tag]
                self.state.metrics.latency.labels(route).observe(time.perf_counter() - start)
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        except ClientDisconnect:
            # The client hung up before its request was read: not a server error (F7).
            # 499 as nginx counts it, so that alerts on 5xx do not fire on it.
            status = 499
        except Exception as exc:
            log_event(
                LOGGER,
                "error",
                level=40,
                request_id=request_id,
                route=route,
                exc=type(exc).__name__,
                origin=str(exc) if isinstance(exc, WorkerError) else None,
            )
            if not started:
                err = ApiError(500, "Internal error; the server logged its class, not its text.")
                await err.response()(scope, receive, send_wrapper)
        finally:
            self.state.metrics.requests.labels(route, str(status)).inc()
            log_event(
                LOGGER,
                "request",
                request_id=request_id,
                method=scope["method"],
                route=route,
                status=status,
                ms=round((time.perf_counter() - start) * 1000.0, 2),
            )


def create_app(config: ServeConfig | None = None, *, bound_host: str | None = None) -> FastAPI:
    """The budgetctx HTTP app (run it with uvicorn, or ``budgetctx serve``).

    ``bound_host``: the address the server listens on, whose name (and the loopback names)
    the Host check allows unless ``[security] allowed_hosts`` says otherwise; ``None``
    checks the Host only when ``allowed_hosts`` is set.
    """
    state = _State(config if config is not None else ServeConfig(), bound_host=bound_host)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await state.warm()
        yield
        if state.upstream is not None:
            await state.upstream.aclose()
        if state.pool is not None:
            state.pool.shutdown(wait=False, cancel_futures=True)

    # No /docs pages: they load their scripts from a CDN, and the server must work offline.
    app = FastAPI(
        title="budgetctx",
        version=__version__,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,  # the schema is in the README; no route the docs do not need
    )
    app.state.budgetctx = state
    # Inside _Observe (added last, so outermost): refusals are counted and logged too.
    app.add_middleware(Guard, policy=state.policy)
    app.add_middleware(_Observe, state=state)

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> Response:
        log_event(
            LOGGER,
            "refused",
            level=30,
            route=_route(request.url.path),
            status=exc.status,
            kind=exc.kind,
        )
        return exc.response()

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
        # Starlette's own 404/405 in the one error shape, with the routes as the fix.
        message = (
            f"{exc.detail}: {request.method} {request.url.path[:80]}. The routes are "
            "POST /v1/context, POST /v1/contexts, POST /v1/chat/completions, POST /v1/responses, "
            "POST /v1/messages, GET /v1/provenance/{id}, GET /healthz, GET /metrics and GET /."
        )
        return await _api_error(request, ApiError(exc.status_code, message, kind="no_route"))

    @app.exception_handler(BudgetCtxError)
    async def _library_error(request: Request, exc: BudgetCtxError) -> Response:
        return await _api_error(request, from_library(exc))

    @app.get("/healthz")
    async def healthz() -> dict[str, Any]:
        return {
            "status": "ok",
            "version": __version__,
            "upstream": state.upstream is not None,
            "provenance": state.store.enabled,
        }

    @app.get("/metrics")
    async def metrics() -> Response:
        return Response(state.metrics.render(), media_type=CONTENT_TYPE)

    @app.get("/")
    async def viewer() -> HTMLResponse:
        page = resources.files("budgetctx.serve").joinpath("static", "viewer.html")
        return HTMLResponse(page.read_text(encoding="utf-8"))

    @app.get("/v1/provenance/{id}")
    async def provenance(id: str) -> JSONResponse:
        # Only its creator may read a record (with keys on); to others it does not exist.
        record = state.store.get(id) if state.owners.may_read(id) else None
        if record is None:
            why = (
                f"it expired (the store keeps the last {state.store.size} records) or never existed"
                if state.store.enabled
                else "this server keeps no provenance (provenance_size = 0)"
            )
            raise ApiError(
                404,
                f"No provenance record with this id: {why}. Read it soon after the request, or "
                "raise provenance_size.",
                parameter="id",
                kind="provenance_missing",
            )
        return JSONResponse(record)

    @app.delete("/v1/provenance/{id}")
    async def delete_provenance(id: str) -> Response:
        # As for reading: only its creator may delete a record (with keys on).
        if not state.owners.may_read(id) or not state.store.delete(id):
            raise ApiError(
                404,
                "No provenance record with this id (already deleted, expired or never "
                "existed); nothing to delete.",
                parameter="id",
                kind="provenance_missing",
            )
        return Response(status_code=204)

    @app.post("/v1/context")
    async def context(request: Request) -> JSONResponse:
        parsed = parse_context_request(
            await state.body(request), max_documents=state.config.limits.max_documents
        )
        record = await state.run(context_job, *_job_args(state, parsed))
        out, headers = _answer(state, record)
        headers["x-budgetctx-selector"] = str(record["selector"])
        return JSONResponse(out, headers=headers)

    @app.post("/v1/contexts")
    async def contexts(request: Request) -> JSONResponse:
        body = await state.body(request)
        items = body.get("requests") if isinstance(body, dict) and len(body) == 1 else None
        if not isinstance(items, list):
            raise bad_parameter(
                "requests",
                body if not isinstance(body, dict) else body.get("requests"),
                "a list of /v1/context request objects, the body's only field",
                'send {"requests": [{"text": "...", "budget": 512}, ...]}.',
            )
        limit = state.config.limits.max_documents
        jobs: list[tuple[Any, Any, dict[str, Any], str | None] | ApiError] = []
        total = 0
        for item in items:
            try:
                one = parse_context_request(item, max_documents=limit)
                total += one.n_documents
                jobs.append(_job_args(state, one))
            except ApiError as exc:
                jobs.append(exc)
            except BudgetCtxError as exc:
                jobs.append(from_library(exc))
        if total > limit:
            raise ApiError(
                422,
                f"The batch has {total} documents; this server takes at most {limit} per "
                "request. Split it into several requests, or raise limits.max_documents.",
                parameter="requests",
                value=total,
                kind="too_many_documents",
            )
        runnable = [job for job in jobs if not isinstance(job, ApiError)]
        outcomes = iter(await state.run(contexts_job, runnable))
        results: list[dict[str, Any]] = []
        for job in jobs:
            try:
                if isinstance(job, ApiError):
                    raise job
                results.append(_answer(state, unwrap(next(outcomes)))[0])
            except ApiError as exc:
                results.append({**exc.body(), "status": exc.status})
        return JSONResponse({"results": results})

    @app.post("/v1/chat/completions")
    async def chat_completions(request: Request) -> Response:
        return await _forward(state, request, "chat/completions")

    @app.post("/v1/responses")
    async def responses(request: Request) -> Response:
        return await _forward(state, request, "responses")

    @app.post("/v1/messages")
    async def anthropic_messages(request: Request) -> Response:
        return await _forward(state, request, "messages")

    return app


async def _forward(state: _State, request: Request, api: str) -> Response:
    """Count the prompt, condense it when over the budget, forward it, relay the answer."""
    upstream = state.upstream
    if upstream is None:
        raise ApiError(
            503,
            f"This server has no upstream to forward /v1/{api} to; set [upstream] base_url in "
            "its configuration.",
            kind="no_upstream",
        )
    body = await state.body(request)
    if not isinstance(body, dict):
        raise ApiError(
            400,
            f"The request body must be a JSON object with 'model'; send an OpenAI /v1/{api} "
            "request.",
            kind="not_object",
        )
    target = state.resolver.model(body.get("model"))
    budget = _budget(request.headers.get(_BUDGET_HEADER), target)
    endpoint = api.replace("/", ".")
    view = to_messages(body) if api == "responses" else None
    chat = to_chat(body) if api == "messages" else None
    messages = (
        view.messages if view is not None else chat.messages if chat is not None else None
    ) or body.get("messages")
    tools = body.get("tools")
    # tool definitions count as their JSON text (an estimate: no provider publishes the rule)
    tools_json = json.dumps(tools, ensure_ascii=False) if tools else None
    # cache-stable condensing: the conversation's last fit, reused as the prefix while it fits
    conversation = None
    if state.conversations.size > 0 and isinstance(messages, list):
        conversation = state.conversations.key(target.name, budget, messages)
    before, fitted, remember = await state.run(
        stable_fit_job,
        messages,
        budget,
        target.tokenizer,
        target.reserve,
        target.selector,
        tools_json,
        IMAGE_TOKENS if chat is not None else None,
        None if conversation is None else state.conversations.get(conversation),
    )
    if conversation is not None and remember is not None:
        state.conversations.put(conversation, remember)
    headers = {
        "x-budgetctx-tokens-before": str(before),
        "x-budgetctx-count": "exact" if _exact(target.tokenizer) else "estimate",
    }
    payload = body
    if fitted is None:
        after, selector = before, "none"
    else:
        if view is not None:
            payload = apply_fitted(body, view, fitted)
        elif chat is not None:
            payload = apply_anthropic(body, chat, fitted)
        else:
            payload = {**body, "messages": list(fitted.messages)}
        after = before - fitted.prompt_tokens_before + fitted.prompt_tokens
        selector = _selector_of(fitted)
        reused = bool(fitted.notes) and fitted.notes[0].startswith("stable prefix")
        headers["x-budgetctx-prefix"] = "reused" if reused else "new"
        pid = state.store.put({"endpoint": endpoint, **fitted.to_dict()}, owner=PRINCIPAL.get())
        state.owners.claim(pid)
        if pid is not None:
            headers["x-budgetctx-provenance-id"] = pid
    if chat is not None and state.config.anthropic_cache_breakpoint:
        payload = place_breakpoint(payload)
    headers["x-budgetctx-tokens-after"] = str(after)
    headers["x-budgetctx-selector"] = selector
    state.metrics.tokens(endpoint=endpoint, before=before, after=after)
    log_event(
        LOGGER,
        "forward",
        api=endpoint,
        model=target.name if target.configured else "(unconfigured)",
        tokens_before=before,
        tokens_after=after,
        condensed=fitted is not None,
        stream=bool(body.get("stream")),
    )

    def upstream_error(kind: str) -> None:
        state.metrics.upstream_errors.labels(kind).inc()
        log_event(LOGGER, "upstream_error", level=30, kind=kind)

    return await upstream.forward(
        payload,
        api=api,
        model=target.name,
        deployment=target.deployment,
        # With keys on, the client's Authorization is for this server, not the upstream.
        client_headers={
            k: v
            for k, v in request.headers.items()
            if not (state.policy.keys and k == "authorization")
        },
        extra_headers=headers,
        on_error=upstream_error,
    )


def _job_args(state: _State, parsed: ContextRequest) -> tuple[Any, Any, dict[str, Any], str | None]:
    """:func:`context_job`'s arguments: the tokenizer checked here, sent as its spec."""
    options = dict(parsed.options)
    tokenizer = options.pop("tokenizer", None)
    spec = None if tokenizer is None else state.resolver.tokenizer(tokenizer)
    return parsed.documents, parsed.budget, options, spec


def _answer(state: _State, record: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    before, after = int(record["document_tokens"]), int(record["tokens_used"])
    pid = state.store.put({"endpoint": "context", "context": record}, owner=PRINCIPAL.get())
    state.owners.claim(pid)
    state.metrics.tokens(endpoint="context", before=before, after=after)
    headers = {"x-budgetctx-tokens-before": str(before), "x-budgetctx-tokens-after": str(after)}
    if pid is not None:
        headers["x-budgetctx-provenance-id"] = pid
    return {**record, "provenance_id": pid}, headers


def _budget(header: str | None, target: ModelTarget) -> int | None:
    """The stricter of the header's budget and the model's: a client may tighten, not loosen."""
    if header is None:
        return target.budget
    digits = header.strip()
    # isascii: "²" is a digit to str.isdigit but not to int() (F5); 9 digits is plenty.
    if not (digits.isascii() and digits.isdigit() and len(digits) <= 9) or int(digits) <= 0:
        raise bad_parameter(
            _BUDGET_HEADER, header[:40], "a positive integer", "e.g. x-budgetctx-budget: 4000."
        )
    value = int(digits)
    return value if target.budget is None else min(value, target.budget)


def _exact(tokenizer: str) -> bool:
    return is_exact(load_tokenizer(tokenizer))


def _selector_of(fitted: FittedMessages) -> str:
    names = sorted({p.selector for p in fitted.compressed})
    return ",".join(names) or "none"
