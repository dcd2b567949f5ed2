# evalq: the README names these targets.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

# torch comes first, alone, from PyTorch's CPU-only index: on Linux the PyPI wheel pulls several
# GB of CUDA libraries that a BERTScore worker does not use. --index-url (not --extra-index-url),
# so an unreachable index fails instead of silently falling back to the CUDA build; --no-deps, so
# only torch comes from there (its dependencies come from PyPI with the extras). A machine with a
# local wheelhouse (pip's find-links) still finds the wheel there. On a GPU box pick the CUDA
# index, e.g. `make demo TORCH_INDEX=https://download.pytorch.org/whl/cu128` (README).
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
TORCH := $(shell sed -n 's/^ *"\(torch==[^"]*\)".*/\1/p' pyproject.toml | head -n 1)

.PHONY: install demo test test-fast test-stress lint format clean

# One stamp per extra set, so `make test` after `make demo` still installs the dev extras.
install: $(VENV)/.installed-dev

$(VENV)/.created:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	touch $@

$(VENV)/.torch: pyproject.toml | $(VENV)/.created
	$(BIN)/pip install --quiet --no-deps $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX)) '$(TORCH)'
	touch $@

$(VENV)/.installed-%: pyproject.toml $(VENV)/.torch
	$(BIN)/pip install --quiet -e '.[$*]'
	touch $@

demo: $(VENV)/.installed-worker  ## the main job: evaluate the bundled examples end to end, print leaderboards
	$(BIN)/evalq demo

# pytest-xdist workers: the suite mostly waits on real servers and workers, so more workers
# than cores pay (README, "Development"); each starts a Redis server of its own.
TEST_WORKERS ?= 4
# Bytecode and pytest's rewritten test modules are cached on disk even where the environment
# says otherwise: every xdist worker and every `evalq` subprocess a test starts would compile
# them again (collection 26 s -> 15 s per process, measured with and without).
test test-fast: export PYTHONDONTWRITEBYTECODE :=
PYTEST_PARALLEL := $(BIN)/pytest -n $(TEST_WORKERS) --durations=20  # scheduled by tests/conftest.py

test: install  ## what CI runs: lint, types, every test (fault drills included)
	$(BIN)/ruff check src tests bench examples
	$(BIN)/ruff format --check src tests bench examples
	$(BIN)/mypy src
	$(PYTEST_PARALLEL) -m "not exclusive"
	$(BIN)/pytest -m exclusive  # alone, last: a PostgreSQL restart, local LLMs (tests/conftest.py)

# The suite with as many CPU hogs beside it as there are cores (.ci/stress): run it before a stop;
# no outcome may depend on how fast the box is (issue 43).
test-stress: install  ## `make test` on a busy machine
	.ci/stress $(MAKE) test

test-fast: install  ## the same without the slow fault drills
	$(PYTEST_PARALLEL) -m "not slow and not exclusive"

lint: install
	$(BIN)/ruff check src tests
	$(BIN)/mypy src

format: install
	$(BIN)/ruff format src tests
	$(BIN)/ruff check --fix src tests

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache evalq.db*
