# Two entry points on a fresh machine: `make demo` and `make test`. Both build .venv themselves.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP_CORE := $(VENV)/.installed-core
STAMP_TEST := $(VENV)/.installed-test

# uv installs in parallel what pip installs one package at a time, and builds llama-cpp-python
# (compiled from source: no binary wheel for this platform) while it downloads the rest. It does
# not read pip's configuration, so .ci/uv_pip_options.py hands it pip's indexes, links and
# constraints (the CPU-only torch wheel among them).
UV := $(BIN)/uv
# Two steps so that a failure to read pip's settings stops the install instead of going to PyPI.
UV_OPTIONS = uv_options="$$($(BIN)/python .ci/uv_pip_options.py)"
UV_INSTALL = $(UV) pip install --quiet --python $(BIN)/python $$uv_options
# llama.cpp built with only what the bindings load: no multimodal (mtmd) library, no `common`
# library. Tests, tools, examples and the server are already off when llama.cpp is a subproject,
# and ggml builds one CPU backend for this machine (-march=native).
LLAMA_CMAKE_ARGS := -DLLAVA_BUILD=OFF -DCMAKE_PROJECT_llama.cpp_INCLUDE=$(CURDIR)/.ci/llama_cpp_minimal.cmake

.PHONY: demo test lint typecheck unit bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# A target of its own, so that a .venv made before uv was used gets it too.
$(UV): | $(BIN)/python
	$(BIN)/python -m pip install --quiet uv

$(STAMP_CORE): pyproject.toml | $(UV)
	$(UV_OPTIONS) && $(UV_INSTALL) -e .
	touch $@

$(STAMP_TEST): pyproject.toml | $(UV)
	$(UV_OPTIONS) && CMAKE_ARGS="$(LLAMA_CMAKE_ARGS) $$CMAKE_ARGS" $(UV_INSTALL) -e '.[test]'
	touch $@ $(STAMP_CORE)

demo: $(STAMP_CORE)
	$(BIN)/budgetctx demo

lint: $(STAMP_TEST)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: $(STAMP_TEST)
	$(BIN)/mypy

unit: $(STAMP_TEST)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest -q

test: lint typecheck unit

bench: $(STAMP_TEST)
	$(BIN)/python benchmarks/bench_build_context.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
