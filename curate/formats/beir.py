"""BEIR folders: corpus.jsonl, queries.jsonl, qrels/*.tsv.

One chunk per corpus document, the corpus id as its chunk id, so existing BEIR and
TREC runs score directly. On export, each query's metadata carries the item's curate
fields and evidence spans, so importing an export gives back the same items.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from curate.errors import InputError, InvalidRecords
from curate.fileio import atomic_directory, iter_json_objects, jsonl_bytes, read_text
from curate.formats.raw import RawItem
from curate.kb import sha256_text
from curate.records import Chunk, Document, EvalItem, item_groups, retrieval_qrels

SPLIT_OF_QRELS = {"test": "test", "dev": "dev", "train": "dev", "validation": "dev", "regression": "regression"}
CURATE_KEY = "curate"


def _read_corpus(path: Path, encoding: str) -> tuple[list[Document], list[Chunk]]:
    documents, chunks, errors = [], [], []
    seen: set[str] = set()
    own_documents = True
    for line, record in iter_json_objects(path, encoding):
        if isinstance(record, InputError):
            errors.append(record)
            continue
        chunk_id = record.get("_id")
        text = record.get("text")
        if chunk_id is None or chunk_id == "":
            errors.append(InputError("missing", file=str(path), line=line, field="_id"))
            continue
        if not isinstance(text, str):
            errors.append(InputError("missing or not text", file=str(path), line=line, field="text"))
            continue
        chunk_id = str(chunk_id)
        if chunk_id in seen:
            errors.append(InputError(f"duplicate _id '{chunk_id}'", file=str(path), line=line, field="_id"))
            continue
        seen.add(chunk_id)
        title = record.get("title") or None
        meta = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
        anchor = meta.get(CURATE_KEY) if isinstance(meta.get(CURATE_KEY), dict) else {}
        doc_id = str(anchor.get("doc_id", chunk_id))
        start, end = anchor.get("start", 0), anchor.get("end", len(text))
        if doc_id != chunk_id:
            own_documents = False
        chunk_meta = {"title": title} if title else {}
        chunk_meta.update({k: v for k, v in anchor.get("metadata", {}).items()})
        chunks.append(Chunk(chunk_id=chunk_id, doc_id=doc_id, text=text, start=start, end=end,
                            text_sha256=sha256_text(text), metadata=chunk_meta))
        documents.append(Document(doc_id=chunk_id, text=text, title=title, text_sha256=sha256_text(text)))
    if errors:
        raise InvalidRecords(errors)
    # A corpus written from chunks of larger documents keeps those documents' ids and offsets;
    # it then has no whole documents of its own.
    return (documents if own_documents else []), chunks


def _read_qrels(folder: Path, encoding: str) -> dict[str, list[tuple[str, int, str]]]:
    """Return {query id: [(corpus id, score, split)]} from every qrels/*.tsv."""
    qrels: dict[str, list[tuple[str, int, str]]] = defaultdict(list)
    files = sorted((folder / "qrels").glob("*.tsv"))
    if not files:
        raise InputError("no qrels/*.tsv files", file=str(folder / "qrels"))
    for path in files:
        split = SPLIT_OF_QRELS.get(path.stem, path.stem)
        for number, row in enumerate(csv.reader(io.StringIO(read_text(path, encoding)), delimiter="\t"), 1):
            if not row or (number == 1 and row[0] in ("query-id", "query_id", "qid")):
                continue
            if len(row) != 3:
                raise InputError(f"expected 3 tab-separated columns, got {len(row)}", file=str(path), line=number)
            try:
                score = int(float(row[2]))
            except ValueError:
                raise InputError(f"score {row[2]!r} is not a number", file=str(path), line=number,
                                 field="score") from None
            qrels[row[0]].append((row[1], score, split))
    return qrels


def read_beir(folder: Path, encoding: str = "utf-8") -> tuple[list[Document], list[Chunk], list[RawItem | InputError]]:
    """Return the corpus as documents and chunks, and one raw item per judged query."""
    folder = Path(folder)
    for name in ("corpus.jsonl", "queries.jsonl"):
        if not (folder / name).is_file():
            raise InputError(f"a BEIR folder needs {name}", file=str(folder / name))
    documents, chunks = _read_corpus(folder / "corpus.jsonl", encoding)
    qrels = _read_qrels(folder, encoding)
    all_scores = [score for rows in qrels.values() for _, score, _ in rows]
    binary = max(all_scores, default=1) <= 1
    raws: list[RawItem | InputError] = []
    queries_path = folder / "queries.jsonl"
    for line, record in iter_json_objects(queries_path, encoding):
        if isinstance(record, InputError):
            raws.append(record)
            continue
        query_id = str(record.get("_id", ""))
        meta = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
        ours = meta.get(CURATE_KEY) if isinstance(meta.get(CURATE_KEY), dict) else None
        judged = qrels.get(query_id, [])
        if not judged and ours is None:
            continue  # a query nobody judged is not an evaluation item
        fields: dict = {"id": query_id or None, "question": record.get("text")}
        splits = {split for _, _, split in judged}
        if ours is not None:
            for key in ("reference_answer", "answers", "key_points", "answerable", "qtype", "split", "tags", "source",
                        "asker_groups", "asker_role", "as_of"):
                if ours.get(key) is not None:
                    fields[key] = ours[key]
        elif len(splits) == 1 and next(iter(splits)) in ("dev", "test", "regression"):
            fields["split"] = next(iter(splits))
        grades = {}
        for chunk_id, score, _ in judged:
            grade = 2 if (binary and ours is None and score >= 1) else max(0, min(2, score))
            grades[chunk_id] = max(grade, grades.get(chunk_id, 0))
        # Spans from our own metadata where the qrels still back them; the qrels decide the grade.
        evidence, covered = [], set()
        for entry in (ours or {}).get("evidence", []):
            ids = entry.get("chunk_ids", [])
            if ids and all(i in grades for i in ids):
                grade = entry.get("grade", 2) if entry.get("grade") in (0, 1, 2) else 2
                evidence.append({"doc_id": entry.get("doc_id"), "start": entry.get("start"), "end": entry.get("end"),
                                 "text": entry.get("text"), "grade": min(grade, max(grades[i] for i in ids)),
                                 **({"any_of": entry["any_of"]} if isinstance(entry.get("any_of"), str) else {})})
                covered.update(ids)
        evidence += [{"chunk_id": chunk_id, "grade": grade} for chunk_id, grade in grades.items()
                     if chunk_id not in covered]
        fields["evidence"] = evidence
        raws.append(RawItem(file=str(queries_path), line=line, fields=fields, extra={}, format="beir"))
    return documents, chunks, raws


def write_beir(out: Path, items: Sequence[EvalItem], chunks: Sequence[Chunk]) -> dict[str, int]:
    """Write a BEIR folder (graded qrels per split) atomically; return counts of what was written.

    Beside the chunk-level qrels (`qrels/<split>.tsv`), `groups/` holds the qrels in evidence-group
    terms, as evalrun scores: `groups/<split>.qrels` (TREC: query 0 group-key grade) and
    `groups/chunks.tsv` (query, chunk, group key: which chunks find which group; a chunk holding
    two facts has a row for each). A run written in the same terms (`evalrun export-run`) gives,
    with trec_eval or ranx, evalrun's own values, but for the recall of items where one retrieved
    chunk finds several groups at once (a TREC rank holds one id): those items are counted.
    Items evalrun cannot score (evidence that maps to no chunk) are left out of them and counted.
    """
    by_split: dict[str, list[tuple[str, str, int]]] = defaultdict(list)
    group_qrels: dict[str, list[tuple[str, str, int]]] = defaultdict(list)
    group_chunks: list[tuple[str, str, str]] = []
    queries = []
    skipped = unscorable = several = 0
    for item in items:
        if item.answerable:
            target = retrieval_qrels(item)
            if isinstance(target, str):
                unscorable += bool(item_groups(item))
            else:
                grades_by_group, chunk_groups = target
                group_qrels[item.split or "test"].extend((item.id, g, grade) for g, grade in grades_by_group.items())
                group_chunks.extend((item.id, c, g) for c, held in chunk_groups.items() for g in held)
                several += any(len(held) > 1 for held in chunk_groups.values())
        # Judged-irrelevant chunks are qrels of grade 0; each relevant group's chunks (copies
        # included) carry its grade.
        grades: dict[str, int] = {c: 0 for e in item.evidence if e.grade == 0 for c in e.chunk_ids}
        skipped += sum(1 for e in item.evidence if not e.chunk_ids)
        for group in item_groups(item):
            for chunk_id in group.chunk_ids:
                grades[chunk_id] = max(group.grade, grades.get(chunk_id, 0))
        for chunk_id, grade in grades.items():
            by_split[item.split or "test"].append((item.id, chunk_id, grade))
        ours = item.model_dump(mode="json", include={"reference_answer", "answers", "key_points", "answerable",
                                                       "qtype", "split", "tags", "source", "asker_groups",
                                                       "asker_role", "as_of"})
        ours["evidence"] = [e.model_dump(mode="json", include={"doc_id", "start", "end", "text", "chunk_ids", "grade",
                                                               "any_of"})
                            for e in item.evidence if e.chunk_ids]
        queries.append({"_id": item.id, "text": item.question, "metadata": {CURATE_KEY: ours}})
    corpus = []
    for chunk in chunks:
        anchor = {"doc_id": chunk.doc_id, "start": chunk.start, "end": chunk.end,
                  "metadata": {k: v for k, v in chunk.metadata.items() if k != "title"}}
        corpus.append({"_id": chunk.chunk_id, "title": chunk.metadata.get("title") or "", "text": chunk.text,
                       "metadata": {CURATE_KEY: anchor}})
    with atomic_directory(Path(out), replace=True) as tmp:
        (tmp / "corpus.jsonl").write_bytes(jsonl_bytes(corpus))
        (tmp / "queries.jsonl").write_bytes(jsonl_bytes(queries))
        (tmp / "qrels").mkdir()
        for split, rows in sorted(by_split.items()):
            lines = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{c}\t{g}" for q, c, g in rows]
            (tmp / "qrels" / f"{split}.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
        if not by_split:
            (tmp / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n", encoding="utf-8")
        (tmp / "groups").mkdir()
        for split, rows in sorted(group_qrels.items()):
            (tmp / "groups" / f"{split}.qrels").write_text("".join(f"{q} 0 {g} {grade}\n" for q, g, grade in rows),
                                                          encoding="utf-8")
        (tmp / "groups" / "chunks.tsv").write_text(
            "query-id\tcorpus-id\tgroup\n" + "".join(f"{q}\t{c}\t{g}\n" for q, c, g in group_chunks),
            encoding="utf-8")
    counts = {"queries": len(queries), "corpus": len(corpus), "qrels": sum(map(len, by_split.values())),
              "group qrels": sum(map(len, group_qrels.values())), "evidence without chunks": skipped,
              "items left out of the group qrels (evidence with no chunk)": unscorable}
    if several:
        counts[SEVERAL] = several
    return counts


SEVERAL = ("items with a chunk that holds several evidence groups (retrieved, it finds them all at one "
           "rank: trec_eval's recall counts one there, so it can differ from evalrun's on them)")
