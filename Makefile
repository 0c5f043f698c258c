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

.PHONY: demo test lint typecheck unit docs dist bench clean browser

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

# Chromium from the distribution for the viewer's browser tests: Playwright drives it (its own
# browser download is not used, so chromium-driver is not needed either). Installed only when
# missing and when apt-get can run as root; otherwise, or when apt-get fails, the tests skip
# and say why: this target never fails the build.
CHROMIUM_NAMES := chromium chromium-browser google-chrome
browser:
	@if [ -n "$$BUDGETCTX_CHROMIUM" ] || for b in $(CHROMIUM_NAMES); do command -v $$b; done \
	    | grep -q .; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "make browser: installing chromium with apt-get"; \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	      --no-install-recommends chromium >/dev/null; } \
	    || echo "make browser: apt-get could not install chromium; the browser tests will skip"; \
	else echo "make browser: no chromium, and no apt-get as root; the browser tests will skip"; fi

unit: $(STAMP_TEST) browser
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest -q

# The documentation site (mkdocs.yml, docs/): built with --strict, so a broken link, a missing
# page or an API reference that no longer matches the code fails the build. Output in site/.
docs: $(STAMP_TEST)
	NO_MKDOCS_2_WARNING=1 PYTHONPATH=$(CURDIR)/src $(BIN)/mkdocs build --strict --quiet --site-dir site

test: lint typecheck docs unit

# The sdist and the wheel, and a CycloneDX SBOM of the runtime dependencies: the wheel is
# installed alone into a scratch environment and cyclonedx-py lists what it resolved to (the
# real versions, not the ranges in pyproject.toml). uv build takes pip's indexes as well, with
# pip's constraints as build constraints (its only constraint option).
SBOM_VENV := dist/.sbom-venv
dist: $(STAMP_TEST)
	rm -rf dist
	$(UV_OPTIONS) && $(UV) build --quiet \
	    $$(printf '%s\n' $$uv_options | sed 's/^--constraint$$/--build-constraints/') --out-dir dist
	$(UV) venv --quiet --python $(BIN)/python $(SBOM_VENV)
	$(UV_OPTIONS) && $(UV) pip install --quiet --python $(SBOM_VENV)/bin/python $$uv_options \
	    dist/budgetctx-*.whl
	$(BIN)/cyclonedx-py environment --output-reproducible --of JSON \
	    -o dist/$$(basename dist/budgetctx-*.whl .whl).cdx.json $(SBOM_VENV)/bin/python
	rm -rf $(SBOM_VENV)
	@ls dist

bench: $(STAMP_TEST)
	$(BIN)/python benchmarks/bench_build_context.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis dist site
