# Two commands do everything on a fresh machine (see README):
#   make demo   set up, install the default models, build the index, answer a question with citations
#   make test   set up, install the test model, run the test suite
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# A CPU build of torch; plain `torch` would pull a multi-GB CUDA build.
TORCH_SPEC ?= torch==2.13.0
QUESTION ?= Does as-needed budesonide-formoterol reduce severe exacerbations in mild asthma?
export HF_HUB_OFFLINE := 1
export OMP_WAIT_POLICY := PASSIVE
export TOKENIZERS_PARALLELISM := false

.PHONY: setup browser demo test test-fast lint bench lock

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q "$(TORCH_SPEC)"
	$(BIN)/python -m pip install -q -c constraints.txt -e ".[dev]"
	touch $@

demo: setup
	$(BIN)/biocite models install
	$(BIN)/biocite index build
	$(BIN)/biocite ask "$(QUESTION)"

test: setup browser
	$(BIN)/biocite models install smollm2
	$(BIN)/python -m pytest -q

test-fast: setup
	$(BIN)/python -m pytest -q -m "not slow"

# Debian's Chromium for the browser tests (web page, HTML report); they skip, saying why, without it.
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-headless-shell >/dev/null 2>&1 || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || \
	  echo "Chromium could not be installed (needs root and apt-get): browser tests will be skipped"

lint: setup
	$(BIN)/ruff check core index agent evaluator app tests bench
	$(BIN)/ruff format --check core index agent evaluator app tests bench
	$(BIN)/python -m tests.test_layers
	$(BIN)/python -m tests.test_layers --mypy

# Refresh constraints.txt from the current venv (after a dependency change that the tests passed with).
lock: setup
	{ sed -n 1,2p constraints.txt; $(BIN)/python -m pip freeze --exclude-editable | grep -v -i '^torch==\|^biocite'; } > constraints.new
	mv constraints.new constraints.txt
