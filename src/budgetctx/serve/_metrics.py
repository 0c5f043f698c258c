"""Prometheus metrics of one app: requests, latency, tokens in/out/saved, upstream errors.

Each app owns a registry of its own, so that two apps in one process (tests, embedders) do not
collide on metric names.

>>> m = Metrics()
>>> m.tokens(endpoint="context", before=100, after=40)
>>> b"budgetctx_tokens_saved_total" in m.render()
True
"""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST as CONTENT_TYPE
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

__all__ = ["CONTENT_TYPE", "Metrics"]

_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class Metrics:
    """The counters and histogram the server updates; :meth:`render` is the scrape body."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "budgetctx_requests",
            "HTTP requests answered, by route and status.",
            ("route", "status"),
            registry=self.registry,
        )
        self.latency = Histogram(
            "budgetctx_request_seconds",
            "Time from request to the response's first byte, by route.",
            ("route",),
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.tokens_in = Counter(
            "budgetctx_tokens_in",
            "Prompt/document tokens received, counted with the target tokenizer.",
            ("endpoint",),
            registry=self.registry,
        )
        self.tokens_out = Counter(
            "budgetctx_tokens_out",
            "Tokens sent on (the context, or the forwarded prompt).",
            ("endpoint",),
            registry=self.registry,
        )
        self.tokens_saved = Counter(
            "budgetctx_tokens_saved",
            "Tokens removed by condensing (in - out).",
            ("endpoint",),
            registry=self.registry,
        )
        self.upstream_errors = Counter(
            "budgetctx_upstream_errors",
            "Upstream failures by kind (timeout, connect, status, malformed, stream).",
            ("kind",),
            registry=self.registry,
        )

    def tokens(self, *, endpoint: str, before: int, after: int) -> None:
        self.tokens_in.labels(endpoint).inc(before)
        self.tokens_out.labels(endpoint).inc(after)
        self.tokens_saved.labels(endpoint).inc(max(before - after, 0))

    def render(self) -> bytes:
        return generate_latest(self.registry)
