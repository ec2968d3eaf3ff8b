"""The failed items of a scored run as a production log `curate add-failures` reads, so that the
failures of a run over, say, a production replay can be promoted into the regression split.

An item failed when its attribution names one of `attributions` (every one by default: permission_leak,
target_failed, retrieval_miss, context_cut, generation_miss, stale_evidence, hallucination, false_refusal,
false_answer). Each row
holds the question, the system's answer, the chunk ids it retrieved (its candidates), the tag `wrong`
(which add-failures' default rules take as a failure) beside the attributions saying why, the run,
the item id as the row id, and who asked it and when (its asker_role or asker_groups, its as_of) when
the item says. No timestamp: the month is the one add-failures is given.

An item already in the dataset the run was over comes back as its own question: add-failures finds it
an exact duplicate and counts it on that item (how often it failed), never adds it twice.
"""

from __future__ import annotations

from pathlib import Path

from curate import EvalItem, InputError, Releases, Workspace, atomic_write_bytes, jsonl_bytes, load_release
from evalrun.records import scored_run
from evalrun.scoring.score import read_trace
from evalrun.views import ATTRIBUTIONS

FAILURE_TAG = "wrong"


def failure_rows(workspace: Workspace, folder: Path, *, attributions: tuple[str, ...] = ATTRIBUTIONS) -> list[dict]:
    """Return one log row per failed item of a scored run (see the module docstring), in release order."""
    if unknown := sorted(set(attributions) - set(ATTRIBUTIONS)):
        raise InputError(f"unknown attribution {unknown[0]!r} ({', '.join(ATTRIBUTIONS)})", field="attribution")
    run = scored_run(folder)
    manifest = run.manifest
    _, items = load_release(Releases(workspace, manifest.dataset).path(manifest.version))
    scores = {s.item_id: s for s in run.scores}
    run_id = f"{manifest.ref}:{Path(folder).resolve().name}"
    rows = []
    for item in items:
        score = scores.get(item.id)
        why = [a for a in (score.attribution if score else []) if a in attributions]
        if not why:
            continue
        trace, _, _ = read_trace(run.traces.get(item.id), item)   # none: the failure is still one
        answer, retrieved = (trace.answer, [c.chunk_id for c in trace.candidates or []]) if trace else (None, [])
        rows.append({"id": item.id, "question": item.question, "answer": answer, "retrieved_ids": retrieved,
                     "tags": [FAILURE_TAG, *why], "run_id": run_id, **_asker(item)})
    return rows


def _asker(item: EvalItem) -> dict:
    """Return who asked the item and when, as a log row carries them (only what the item sets): the same
    question for another asker or moment is another item to add-failures."""
    fields = {"asker_role": item.asker_role, "as_of": item.as_of}
    if item.asker_role is None:
        fields["asker_groups"] = item.asker_groups
    return {key: value for key, value in fields.items() if value is not None}


def export_failures(workspace: Workspace, folder: Path, out: Path | None, *,
                    attributions: tuple[str, ...] = ATTRIBUTIONS) -> tuple[bytes, int]:
    """Write `failure_rows` as JSONL to `out` atomically (None: return it only); return (the JSONL, rows)."""
    rows = failure_rows(workspace, folder, attributions=attributions)
    data = jsonl_bytes(rows)
    if out is not None:
        atomic_write_bytes(workspace.refuse_state(Path(out)), data)
    return data, len(rows)
