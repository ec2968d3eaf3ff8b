"""A messy KB for the stages that run over shards (BM25, grading): the bundled CMRC sample's chunks with,
planted far apart, Chinese with segmentation spaces, English, passages repeated word for word in many
documents (equal BM25 scores: the tie rule decides), copies that differ only in a year, exact duplicates,
chunks of an access group and versions one supersedes; listed in a scattered order, so documents span shards.
Items cite the filler's paragraphs and the planted chunks, some asked by another group or at another moment."""

from __future__ import annotations

import random

from curate.kb import sha256_text
from curate.records import Chunk, ChunkGroup, ChunkGroups, EvalItem, Evidence, Scope

from tests.support.many_chunks import many_chunks

REFUND = "Refunds are paid within 14 days of the request, to the card used for the purchase."
REFUND_ZH = "退款 须 在 购买 后 七天 内 申请 ， 逾期 不予 受理 。 退款 将 原路 退回 。"


def _chunk(chunk_id: str, text: str, scope: Scope | None = None, start: int = 0) -> Chunk:
    return Chunk(chunk_id=chunk_id, doc_id=chunk_id.split("#")[0], text=text, text_sha256=sha256_text(text),
                 scope=scope, start=start, end=start + len(text))


def messy_kb(count: int = 2_400, seed: int = 7) -> tuple[list[Chunk], list[EvalItem], ChunkGroups]:
    """Return the chunks (scattered: a document's chunks far apart), the items and the copy groups."""
    filler, items, _ = many_chunks(count, seed=seed)
    planted = [_chunk(f"refund-{n}#0", REFUND) for n in range(12)]            # one text in twelve documents
    planted += [_chunk(f"refund-zh-{n}#0", REFUND_ZH) for n in range(6)]
    planted += [_chunk("policy-2024#0", "The 2024 travel policy: economy class for flights under 6 hours."),
                _chunk("policy-2025#0", "The 2025 travel policy: economy class for flights under 6 hours.",
                       Scope(version="2025")),
                _chunk("policy-2026#0", "The 2026 travel policy: business class for flights over 4 hours.",
                       Scope(version="2026", supersedes=["policy-2025"])),
                _chunk("pay-hr#0", "Salary bands are reviewed every April by the HR committee.", Scope(groups=["hr"])),
                _chunk("pay-hr-copy#0", "Salary bands are reviewed every April by the HR committee.",
                       Scope(groups=["hr"])),
                _chunk("pay-all#0", "Salary bands are reviewed every April by the HR committee.")]
    # a long English document in ten chunks
    planted += [_chunk(f"manual#{n}", f"Step {n}: restart the gateway, then check the refund queue for errors.",
                       start=100 * n) for n in range(10)]
    rng = random.Random(seed)
    chunks = list(filler)
    for chunk in planted:
        chunks.insert(rng.randrange(len(chunks) + 1), chunk)
    # scattered: sorted by the chunk number, so each document's chunks are spread over the shards
    chunks.sort(key=lambda c: (c.chunk_id.split("#")[1], rng.random()))
    ids = {c.chunk_id for c in chunks}
    cited = [i for i in items if i.evidence[0].chunk_ids[0] in ids][:150]

    def item(item_id: str, question: str, chunk_ids: list[str], language: str = "en", **asker) -> EvalItem:
        return EvalItem(id=item_id, question=question, reference_answer="-", language=language, source="human",
                        split="test", evidence=[Evidence(evidence_id="e1", chunk_ids=chunk_ids, text="-")], **asker)

    cited += [item("refund-en", "When are refunds paid, and to which card?", ["refund-3#0"]),
              item("refund-zh", "退款 须 在 多久 内 申请 ？", ["refund-zh-2#0"], "zh"),
              item("policy-old", "Which class does the 2025 travel policy allow?", ["policy-2025#0"], as_of="2025"),
              item("policy-new", "Which class does the 2025 travel policy allow?", ["policy-2025#0"], as_of="2026"),
              item("pay", "When are salary bands reviewed?", ["pay-hr#0"], asker_groups=["staff"]),
              item("pay-hr", "When are salary bands reviewed?", ["pay-hr#0"], asker_groups=["hr"]),
              item("manual", "What do I check after restarting the gateway?", ["manual#7"]),
              item("lost", "Where is the missing page?", ["nowhere#0"])]
    members = [[f"refund-{n}#0" for n in range(12)], [f"refund-zh-{n}#0" for n in range(6)],
               ["pay-hr#0", "pay-hr-copy#0", "pay-all#0"]]
    order = {c.chunk_id: n for n, c in enumerate(chunks)}
    groups = ChunkGroups(snapshot="", at="2026-01-01T00:00:00Z", near_min=90.0, groups=[
        ChunkGroup(chunks=sorted(m, key=order.__getitem__), method="exact", min_score=100.0) for m in members])
    return chunks, cited, groups
