"""ragas rows of evaluation items: user_input, reference, reference_contexts and their chunk ids."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from curate.records import Chunk, EvalItem, item_groups


def ragas_rows(items: Sequence[EvalItem], chunks: Mapping[str, Chunk]) -> list[dict]:
    """Return one ragas row per item: user_input, reference, reference_contexts and their ids.

    Each required evidence group (`curate.records.item_groups`) contributes its first chunk, or
    every chunk of a member whose span straddles several, so the two lists stay aligned:
    reference_contexts[i] is the text of reference_context_ids[i].
    """
    rows = []
    for item in items:
        partial = {e.evidence_id: e for e in item.evidence if e.partial}
        ids: list[str] = []
        for group in item_groups(item):
            pieces = [c for eid in group.evidence_ids if eid in partial for c in partial[eid].chunk_ids]
            for chunk_id in pieces or list(group.chunk_ids[:1]):
                if chunk_id not in ids:
                    ids.append(chunk_id)
        rows.append({"id": item.id, "user_input": item.question, "reference": item.reference_answer,
                     "reference_contexts": [chunks[i].text if i in chunks else "" for i in ids],
                     "reference_context_ids": ids})
    return rows
