"""``budgetctx serve``: the library over HTTP and an OpenAI-compatible condensing proxy.

Needs the ``serve`` extra (FastAPI, uvicorn, httpx, prometheus-client); ``import budgetctx``
never imports it.

>>> from budgetctx.serve import ServeConfig, create_app
>>> create_app(ServeConfig()).title
'budgetctx'
"""

from __future__ import annotations

from budgetctx.serve._app import create_app
from budgetctx.serve._config import Limits, ModelConfig, ServeConfig, UpstreamConfig, load_config
from budgetctx.serve._logging import configure_logging
from budgetctx.serve._provenance import ProvenanceStore

__all__ = [
    "Limits",
    "ModelConfig",
    "ProvenanceStore",
    "ServeConfig",
    "UpstreamConfig",
    "configure_logging",
    "create_app",
    "load_config",
]
