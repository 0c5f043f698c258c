"""Error answers: one JSON shape, ``{"error", "parameter", "value"}``, in the library's words.

A library error (:class:`~budgetctx.BudgetCtxError`) keeps its message, which states the bad
value and ends with the fix; the server's own refusals (body too large, too many documents,
selection timeout, upstream failures) are :class:`ApiError` with a status of their own.

>>> from budgetctx import InvalidParameterError
>>> err = from_library(InvalidParameterError("bad", parameter="budget", value=0))
>>> err.status, err.body()
(422, {'error': 'bad', 'parameter': 'budget', 'value': 0})
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.responses import JSONResponse

from budgetctx._core.validation import short_repr
from budgetctx._errors import BudgetCtxError, InvalidParameterError

__all__ = ["ApiError", "from_library"]


class ApiError(Exception):
    """A request the server answers with ``status`` and an error body (never a hang)."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        parameter: str | None = None,
        value: Any = None,
        headers: Mapping[str, str] | None = None,
        kind: str = "request",
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.parameter = parameter
        self.value = value
        self.headers = dict(headers or {})
        #: a short label for logs and metrics ("timeout", "body_too_large"): never request text
        self.kind = kind

    def body(self) -> dict[str, Any]:
        return {"error": self.message, "parameter": self.parameter, "value": self.value}

    def response(self) -> JSONResponse:
        return JSONResponse(self.body(), status_code=self.status, headers=self.headers)


def _json_value(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value if not isinstance(value, str) or len(value) <= 80 else short_repr(value)
    if isinstance(value, list | tuple) and all(isinstance(v, str | int | float) for v in value):
        return [_json_value(v) for v in value][:20]
    return short_repr(value)


def from_library(exc: BudgetCtxError) -> ApiError:
    """422 for a bad value or unusable input; the error's parameter and value are kept."""
    parameter = getattr(exc, "parameter", None)
    value = getattr(exc, "value", None)
    return ApiError(
        422,
        str(exc),
        parameter=parameter if isinstance(parameter, str) else None,
        value=_json_value(value),
        kind=type(exc).__name__,
    )


def bad_parameter(name: str, value: Any, rule: str, fix: str) -> ApiError:
    """The one message template, for request fields the library does not see itself."""
    return from_library(
        InvalidParameterError(
            f"The {name!r} parameter of the request must be {rule}. Got {short_repr(value)} "
            f"instead; {fix}",
            parameter=name,
            value=value,
        )
    )
