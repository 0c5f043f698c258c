"""The one exception tree of budgetctx.

::

    BudgetCtxError
    ├── InvalidParameterError   (also a ValueError)   a bad argument value
    ├── UnknownComponentError   (also a KeyError)     a registry name that does not exist
    ├── InputError              (also a ValueError)   the document itself is unusable
    ├── TokenizerError                                a tokenizer could not be loaded
    ├── MissingExtraError       (also an ImportError) an optional extra is not installed
    ├── DatasetError                                  a dataset is missing or malformed
    └── GenerationError                               an LLM request failed after its retries
        └── ContextLengthError                        the prompt does not fit the model's window

    BudgetCtxWarning (UserWarning)                     something was degraded, not refused

Every message states the bad value and ends with the fix.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "BudgetCtxError",
    "BudgetCtxWarning",
    "ContextLengthError",
    "DatasetError",
    "GenerationError",
    "InputError",
    "InvalidParameterError",
    "MissingExtraError",
    "TokenizerError",
    "UnknownComponentError",
]


class BudgetCtxError(Exception):
    """Base class of every error raised by budgetctx."""


class InvalidParameterError(BudgetCtxError, ValueError):
    """A parameter has a value outside its documented range.

    ``parameter`` and ``value`` are kept so that the CLI and the HTTP service can report them.
    """

    def __init__(self, message: str, *, parameter: str | None = None, value: Any = None) -> None:
        super().__init__(message)
        self.parameter = parameter
        self.value = value


class UnknownComponentError(BudgetCtxError, KeyError):
    """A component name (tokenizer, unitizer, representation, selector) is not registered."""

    def __init__(self, kind: str, name: str, available: list[str]) -> None:
        self.kind = kind
        self.name = name
        self.available = available
        listing = ", ".join(repr(a) for a in available)
        super().__init__(f"Unknown {kind} {name!r}. Valid {kind}s are: {listing}.")

    def __str__(self) -> str:  # KeyError would otherwise repr() the message
        return str(self.args[0])

    @property
    def parameter(self) -> str:
        return self.kind

    @property
    def value(self) -> str:
        return self.name


class InputError(BudgetCtxError, ValueError):
    """The input document cannot be processed (binary, undecodable, ...)."""

    def __init__(self, message: str, *, parameter: str = "text", value: Any = None) -> None:
        super().__init__(message)
        self.parameter = parameter
        self.value = value


class TokenizerError(BudgetCtxError):
    """A tokenizer could not be built (missing file, missing optional dependency)."""


class MissingExtraError(BudgetCtxError, ImportError):
    """A module of budgetctx needs a library of an optional extra that is not installed.

    >>> err = MissingExtraError("budgetctx.integrations.haystack", "haystack-ai", "haystack")
    >>> str(err).endswith("pip install 'budgetctx[haystack]'."), isinstance(err, ImportError)
    (True, True)
    """

    def __init__(self, module: str, package: str, extra: str) -> None:
        super().__init__(
            f"{module} needs {package}, which is not installed; install it with "
            f"pip install 'budgetctx[{extra}]'.",
            name=package,
        )
        self.package = package
        self.extra = extra


class DatasetError(BudgetCtxError):
    """A dataset is missing, malformed or cannot be fetched."""


class GenerationError(BudgetCtxError):
    """An LLM request failed for good (after the last retry) or the backend is unusable.

    ``request`` names the failed request (a random request id and the model, never the prompt
    text) and ``status`` holds the last HTTP status when there was one.
    """

    def __init__(
        self, message: str, *, request: str | None = None, status: int | None = None
    ) -> None:
        super().__init__(message)
        self.request = request
        self.status = status


class ContextLengthError(GenerationError):
    """The prompt (plus the reply's max_tokens) does not fit the model's context window.

    Retrying cannot help: a sweep records the row with this reason instead of failing.
    """


class BudgetCtxWarning(UserWarning):
    """A request was served in a degraded way (for example, a fallback was used)."""
