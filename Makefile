# evalq: the README names these targets.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install demo test test-fast lint format clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0  # the CPU wheel, first, so nothing pulls a CUDA build
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

demo: install  ## the main job: evaluate the bundled examples end to end, print leaderboards
	$(BIN)/evalq demo

test: install  ## what CI runs: lint, types, every test (fault drills included)
	$(BIN)/ruff check src tests bench examples
	$(BIN)/ruff format --check src tests bench examples
	$(BIN)/mypy src
	$(BIN)/pytest

test-fast: install  ## the same without the slow fault drills
	$(BIN)/pytest -m "not slow"

lint: install
	$(BIN)/ruff check src tests
	$(BIN)/mypy src

format: install
	$(BIN)/ruff format src tests
	$(BIN)/ruff check --fix src tests

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache evalq.db*
