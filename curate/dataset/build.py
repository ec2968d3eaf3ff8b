"""Building evaluation items from raw records: evidence located in a KB snapshot, key points,
answerability, qtype, split, source and provenance checked and recorded; and bringing back curate's own
item records (an export, a release's data file) whole, their evidence anchored in the snapshot."""

from __future__ import annotations

import hashlib
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from curate.dataset.asker import checked_item, read_asker
from curate.dataset.locate import Location, Locator, changed_fact, relocate
from curate.scope import parse_moment
from curate.errors import InputError, InvalidRecords
from curate.fileio import dumps_json
from curate.formats.raw import RawItem
from curate.progress import progress
from curate.records import (
    QTYPES,
    SOURCES,
    SPLITS,
    EvalItem,
    Evidence,
    KeyPoint,
    Provenance,
    ScopeSettings,
    evidence_groups,
    extend_with_copies,
)
from curate.text.normalize import language_of

@dataclass
class ImportReport:
    """What an import did."""

    dataset: str
    kb_snapshot: str
    imported: list[str] = field(default_factory=list)
    skipped: list[InputError] = field(default_factory=list)
    located_by: Counter = field(default_factory=Counter)
    records: int = 0
    """Items read whole from curate's own item records (status, history, evidence ids kept)."""
    regrouped: list[tuple[str, int, int]] = field(default_factory=list)
    """(item id, evidence groups in its record, evidence groups here) of each record whose required
    evidence groups are not those it was exported with (copies known in one workspace only, another
    chunking)."""


def _bool(value: Any, raw: RawItem, name: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, str)) and str(value).strip().lower() in ("1", "true", "yes", "y", "t"):
        return True
    if isinstance(value, (int, str)) and str(value).strip().lower() in ("0", "false", "no", "n", "f"):
        return False
    raise InputError(f"must be true or false, got {value!r}", file=raw.file, line=raw.line, field=raw.label(name))


def _text(value: Any, raw: RawItem, name: str, required: bool = False) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise InputError("missing or empty", file=raw.file, line=raw.line, field=raw.label(name))
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise InputError(f"must be text, got {type(value).__name__}", file=raw.file, line=raw.line,
                         field=raw.label(name))
    return value.strip()


def _list(value: Any, raw: RawItem, name: str) -> list:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list):
        raise InputError(f"must be a list, got {type(value).__name__}", file=raw.file, line=raw.line,
                         field=raw.label(name))
    return value


def _evidence_entries(raw: RawItem, locator: Locator) -> list[tuple[str, dict]]:
    """Return (field label, entry) pairs, each entry with a chunk_id or a text, and a grade."""
    entries = []
    for name in ("evidence", "evidence_ids", "evidence_texts"):
        for index, value in enumerate(_list(raw.fields.get(name), raw, name)):
            label = f"{raw.label(name)}[{index}]"
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                value = str(value)
            if isinstance(value, str):
                if name == "evidence_ids" or (name == "evidence" and value in locator.chunks):
                    entry = {"chunk_id": value}
                else:
                    entry = {"text": value}
            elif isinstance(value, dict):
                entry = dict(value)
                unknown = set(entry) - ENTRY_KEYS
                if unknown:
                    raise InputError(f"unknown keys {sorted(unknown)} (known: {', '.join(sorted(ENTRY_KEYS))})",
                                     file=raw.file, line=raw.line, field=label)
                _check_entry(entry, raw, label)
            else:
                raise InputError("must be a chunk id, a quoted text or an object", file=raw.file, line=raw.line,
                                 field=label)
            grade = entry.get("grade", 2)
            if grade not in (0, 1, 2) or not isinstance(grade, int) or isinstance(grade, bool):
                raise InputError(f"grade must be 0, 1 or 2, got {grade!r}", file=raw.file, line=raw.line,
                                 field=label + ".grade")
            entries.append((label, entry))
    return entries


ENTRY_KEYS = {"chunk_id", "text", "grade", "doc_id", "start", "end", "any_of"}


def _check_entry(entry: dict, raw: RawItem, label: str) -> None:
    """Refuse an evidence object whose fields have the wrong type or an impossible span."""
    where = {"file": raw.file, "line": raw.line}
    for key in ("chunk_id", "text", "doc_id", "any_of"):
        value = entry.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and key in ("chunk_id", "doc_id"):
            entry[key] = value = str(value)
        if value is not None and not isinstance(value, str):
            raise InputError(f"must be text, got {type(value).__name__}", field=f"{label}.{key}", **where)
    for key in ("start", "end"):
        value = entry.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            raise InputError(f"must be a whole number >= 0, got {value!r}", field=f"{label}.{key}", **where)
    if (entry.get("start") is None) != (entry.get("end") is None):
        raise InputError("give both start and end, or neither", field=label, **where)
    if entry.get("start") is not None and entry["end"] <= entry["start"]:
        raise InputError(f"an empty or inverted span: start {entry['start']}, end {entry['end']}",
                         field=f"{label}.end", **where)
    if entry.get("start") is not None and entry.get("doc_id") is None:
        raise InputError("a span needs its doc_id", field=f"{label}.doc_id", **where)


def locate_entry(entry: dict, locator: Locator, usable: Callable[[str], bool] | None = None) -> Location | None:
    """Return where an evidence entry sits in the locator's snapshot, or None; a quoted text found in
    several places goes where a chunk is `usable` (by the item's asker at its moment), if anywhere."""
    if entry.get("chunk_id") is not None:
        return locator.by_chunk_id(str(entry["chunk_id"]))
    if entry.get("doc_id") is not None and entry.get("start") is not None and entry.get("end") is not None:
        found = locator.by_span(str(entry["doc_id"]), int(entry["start"]), int(entry["end"]), entry.get("text"))
        if found is not None:
            return found
    if entry.get("text"):
        return locator.by_text(str(entry["text"]), entry.get("doc_id"), usable)
    return None


def _short(text: str, width: int = 40) -> str:
    return text if len(text) <= width else text[:width] + "..."


def _describe(entry: dict) -> str:
    if entry.get("chunk_id") is not None:
        return f"chunk '{entry['chunk_id']}' is not in the KB snapshot"
    quote = _short(str(entry.get("text") or ""))
    return f"evidence text not found in the KB snapshot (exact, normalised or fuzzy): {quote!r}"


EVIDENCE_MODES = ("all", "any")
NO_SCOPE = ScopeSettings()


def _answers(raw: RawItem, reference: str | None) -> tuple[str | None, list[str]]:
    """Return the reference answer and every accepted answer (the reference first, no repeats)."""
    accepted = []
    for index, value in enumerate(_list(raw.fields.get("answers"), raw, "answers")):
        text = _text(value, raw, "answers")
        if text is None:
            raise InputError("an accepted answer is empty", file=raw.file, line=raw.line,
                             field=f"{raw.label('answers')}[{index}]")
        accepted.append(text)
    if reference is None and accepted:
        reference = accepted[0]
    return reference, list(dict.fromkeys(([reference] if reference else []) + accepted))


def build_item(raw: RawItem, *, source: str, locator: Locator, kb_snapshot: str, item_id: str,
               evidence_mode: str = "all", copies: Mapping[str, Sequence[str]] | None = None,
               scope: ScopeSettings | None = None) -> EvalItem:
    """Return the EvalItem of one raw record, its evidence located and extended to the `copies` of
    its chunks (the snapshot's duplicate groups), its asker and moment checked against the `scope`
    settings (`curate.dataset.asker`); raise InputError if it cannot be.

    `evidence_mode` "any" makes the record's relevant evidence alternatives for one fact (finding
    any one counts); "all" (the default) requires each; a record's own `evidence_mode` field wins.
    A quote found only fuzzily (or normalised) with other numbers, dates, amounts or codes than it
    says is refused: that text states another fact. The qtype, unless given, is decided on the
    extended evidence: two quotes of one text in two copies of a chunk are one group, `single`.
    """
    where = {"file": raw.file, "line": raw.line}
    question = raw.fields.get("question")
    if question is not None and not isinstance(question, str):
        raise InputError(f"must be text, got {type(question).__name__}", field=raw.label("question"), **where)
    question = _text(question, raw, "question", required=True)
    answer, answers = _answers(raw, _text(raw.fields.get("reference_answer"), raw, "reference_answer"))
    mode = _text(raw.fields.get("evidence_mode"), raw, "evidence_mode") or evidence_mode
    if mode not in EVIDENCE_MODES:
        raise InputError(f"unknown evidence mode {mode!r} (all: each passage is needed; any: any one passage "
                         f"states the fact)", field=raw.label("evidence_mode"), **where)
    # an empty CSV cell is a field not given, as for every other field of a CSV row
    asker = read_asker(raw.fields, scope or NO_SCOPE, raw.label, file=raw.file, line=raw.line,
                       empty_is_absent=raw.format == "csv")
    usable = locator.usable_for(asker.groups, None if asker.as_of is None else parse_moment(asker.as_of))
    evidence = []
    for label, entry in _evidence_entries(raw, locator):
        found = locate_entry(entry, locator, usable)
        if found is None:
            raise InputError(_describe(entry), field=label, **where)
        if not found.chunk_ids:
            raise InputError(f"evidence found in document '{found.doc_id}' at [{found.start}:{found.end}] but no chunk "
                             f"of the KB snapshot holds it", field=label, **where)
        differs = changed_fact(str(entry["text"]), found) if entry.get("text") else None
        if differs is not None:
            raise InputError(f"the quote is found only as a text with other numbers, dates or codes ({differs}): "
                             f"'{found.doc_id}' [{found.start}:{found.end}] reads {_short(found.text, 80)!r}, the quote "
                             f"{_short(str(entry['text']), 80)!r}; not bound (quote the KB's text, or correct the KB)",
                             field=label, **where)
        grade = entry.get("grade", 2)
        any_of = entry.get("any_of") or ("any" if mode == "any" and grade > 0 else None)
        evidence.append(Evidence(
            evidence_id=f"e{len(evidence) + 1}", doc_id=found.doc_id, start=found.start, end=found.end,
            text=found.text, grade=grade, chunk_ids=found.chunk_ids, kb_snapshot=kb_snapshot,
            located_by=found.located_by, match_score=found.match_score, partial=found.partial, any_of=any_of))
    for located in evidence:
        extend_with_copies(located, copies or {})
    key_points = []
    known_evidence = {e.evidence_id for e in evidence}
    for index, value in enumerate(_list(raw.fields.get("key_points"), raw, "key_points")):
        label = f"key_points[{index}]"
        if isinstance(value, str):
            value = {"text": value}
        if not isinstance(value, dict) or not isinstance(value.get("text"), str) or not value["text"].strip():
            raise InputError("must be a text or an object with a non-empty 'text'", field=label, **where)
        ids = value.get("evidence_ids", [])
        if not isinstance(ids, list) or any(i not in known_evidence for i in ids):
            raise InputError(f"evidence_ids must name this item's evidence ({', '.join(sorted(known_evidence))})",
                             field=label + ".evidence_ids", **where)
        key_points.append(KeyPoint(text=value["text"].strip(), evidence_ids=ids))
    answerable = _bool(raw.fields["answerable"], raw, "answerable") if "answerable" in raw.fields else True
    if not answerable and any(e.grade > 0 for e in evidence):
        raise InputError("an unanswerable item cannot have relevant evidence", field="answerable", **where)
    qtype = _text(raw.fields.get("qtype"), raw, "qtype")
    if qtype is None:
        qtype = "unanswerable" if not answerable else (
            "multi_evidence" if len(evidence_groups(evidence, key_points)) > 1 else "single")
    elif qtype not in QTYPES:
        raise InputError(f"unknown qtype {qtype!r} (one of {', '.join(QTYPES)})", field="qtype", **where)
    split = _text(raw.fields.get("split"), raw, "split")
    if split is not None and split not in SPLITS:
        raise InputError(f"unknown split {split!r} (one of {', '.join(SPLITS)})", field="split", **where)
    tags = [str(t) for t in _list(raw.fields.get("tags"), raw, "tags")]
    if raw.format == "beir" and raw.fields.get("source") in SOURCES:
        source = raw.fields["source"]  # a BEIR folder curate exported keeps each item's source
    if source not in SOURCES:
        raise InputError(f"unknown source {source!r} (one of {', '.join(SOURCES)})", field="source")
    original_id = _text(raw.fields.get("id"), raw, "id")
    try:
        item = EvalItem(
            id=item_id, question=question, reference_answer=answer, answers=answers, key_points=key_points,
            evidence=evidence,
            answerable=answerable, language=language_of(question), qtype=qtype, split=split, source=source,
            kb_snapshot=kb_snapshot, tags=tags, asker_groups=asker.groups, asker_role=asker.role, as_of=asker.as_of,
            provenance=Provenance(file=raw.file, line=raw.line, original_id=original_id, format=raw.format,
                                  extra=dumps_json(raw.extra) if raw.extra else None))
    except ValidationError as exc:
        raise InputError.from_validation(exc, **where) from None
    if answerable and not any(e.grade > 0 for e in evidence):
        item.set_status("needs_evidence", "imported without relevant evidence", by="curate import")
    else:
        item.set_status("draft", f"imported from {Path(raw.file).name}", by="curate import")
    return item


MAX_ID = 200


def check_id(value: str, **where) -> str:
    """Return `value` if it can be an item id: at most 200 characters, no control character (a tab
    or a line break in an id would break TSV and TREC files)."""
    bad = next((c for c in value if unicodedata.category(c).startswith("C")), None)
    if bad is not None:
        raise InputError(f"an id cannot hold the control character U+{ord(bad):04X}", **where)
    if len(value) > MAX_ID:
        raise InputError(f"an id is at most {MAX_ID} characters, this one has {len(value)}", **where)
    return value


def derived_id(question: str, taken: set[str]) -> str:
    """Return a stable id from the question text, made unique against `taken`.

    >>> derived_id("What is LG-4031?", set()) == derived_id("What is LG-4031?", set())
    True
    """
    base = "q-" + hashlib.sha256(question.strip().encode("utf-8")).hexdigest()[:12]
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}-{n}", n + 1
    return candidate


def build_items(raws: Iterable[RawItem | InputError], *, source: str, locator: Locator, kb_snapshot: str,
                existing_ids: set[str], skip_invalid: bool, evidence_mode: str = "all",
                copies: Mapping[str, Sequence[str]] | None = None,
                scope: ScopeSettings | None = None) -> tuple[list[EvalItem], list[InputError]]:
    """Return the items built from `raws` (evidence extended to `copies`, askers and moments checked
    against the `scope` settings) and the errors met; raise if any and not `skip_invalid`."""
    items: list[EvalItem] = []
    errors: list[InputError] = []
    given: dict[str, str] = {}
    taken = set(existing_ids)
    for raw in progress(list(raws), "locating evidence", unit="item"):
        if isinstance(raw, InputError):
            errors.append(raw)
            continue
        try:
            item_id = _text(raw.fields.get("id"), raw, "id")
            if item_id is not None:
                check_id(item_id, file=raw.file, line=raw.line, field=raw.label("id"))
                if item_id in given:
                    raise InputError(f"duplicate id '{item_id}' (first at {given[item_id]})", file=raw.file,
                                     line=raw.line, field="id")
                if item_id in existing_ids:
                    raise InputError(f"id '{item_id}' is already in the dataset", file=raw.file,
                                     line=raw.line, field="id")
            else:
                question = _text(raw.fields.get("question"), raw, "question", required=True)
                item_id = derived_id(question, taken)
            if raw.record is not None:
                item = build_exported(raw, locator=locator, kb_snapshot=kb_snapshot, scope=scope)
            else:
                item = build_item(raw, source=source, locator=locator, kb_snapshot=kb_snapshot, item_id=item_id,
                                  evidence_mode=evidence_mode, copies=copies, scope=scope)
            given[item_id] = f"{raw.file}:{raw.line}"
            taken.add(item_id)
            items.append(item)
        except InputError as exc:
            errors.append(exc)
    if errors and not skip_invalid:
        raise InvalidRecords(errors)
    return items, errors


def _anchor(evidence: Evidence, source_snapshot: str | None, locator: Locator, kb_snapshot: str,
            label: str, where: dict) -> str | None:
    """Anchor one exported evidence in the locator's snapshot (in place); return why its item needs
    review (its text was found again only fuzzily, so it changed), or None; raise InputError when
    it cannot be placed.

    In the snapshot it was exported from, it stays as it is (its own chunks, located_by and score),
    once the snapshot is seen to hold it there; elsewhere it is placed by its span and text, then by
    its text in its document, then anywhere, as `curate remap` places it. Evidence exported unmapped
    that is still not found stays unmapped."""
    own = [c for c in evidence.chunk_ids if c not in evidence.copies]
    spanned = evidence.doc_id is not None and evidence.start is not None and evidence.end is not None
    found = locator.by_span(evidence.doc_id, evidence.start, evidence.end, evidence.text) if spanned else None
    if source_snapshot == kb_snapshot and own and all(c in locator.chunks for c in own) and (
            found is not None and set(own) <= set(found.chunk_ids) if spanned
            else all(evidence.text in locator.chunks[c].text for c in own)):
        return None
    found, _, other = relocate(evidence, locator)
    if found is None:
        if other is not None:
            place, differs = other
            raise InputError(f"evidence found in KB snapshot {kb_snapshot} only as a text with other numbers, dates "
                             f"or codes ({differs}): '{place.doc_id}' [{place.start}:{place.end}] reads "
                             f"{_short(place.text, 80)!r}, the record {_short(evidence.text, 80)!r}; not bound",
                             field=label, **where)
        if evidence.located_by == "unmapped":
            evidence.chunk_ids, evidence.copies, evidence.kb_snapshot = [], [], kb_snapshot
            return None
        raise InputError(f"evidence text not found in KB snapshot {kb_snapshot} (by span, exact, normalised or "
                         f"fuzzy): {_short(evidence.text)!r}; it was exported against {source_snapshot}: import "
                         f"against that snapshot, or `curate remap` the dataset it came from first",
                         field=label, **where)
    changed = found.located_by == "fuzzy" and found.text != evidence.text
    evidence.doc_id, evidence.start, evidence.end, evidence.text = found.doc_id, found.start, found.end, found.text
    evidence.chunk_ids, evidence.copies, evidence.partial = found.chunk_ids, [], found.partial
    evidence.located_by, evidence.match_score, evidence.kb_snapshot = found.located_by, found.match_score, kb_snapshot
    return f"evidence {evidence.evidence_id} found again only fuzzily (score {found.match_score:g})" if changed else None


def build_exported(raw: RawItem, *, locator: Locator, kb_snapshot: str, scope: ScopeSettings | None = None,
                   ) -> EvalItem:
    """Return the item one of curate's own item records holds, as it was exported (id, evidence with
    its ids, grades and alternatives, key points and the evidence they cite, answers, answerable,
    qtype, split, difficulty, tags, source, status and its history, provenance, asker and moment),
    anchored in snapshot `kb_snapshot`; the import is added to its status history. Raise InputError
    naming the field that cannot be carried (an asker or moment the `scope` settings refuse, too).

    An item whose evidence text changed on the way (found only fuzzily in another snapshot) goes
    back from labelled or verified to draft, with the reason."""
    record = raw.record
    where = {"file": raw.file, "line": raw.line}
    item = checked_item(record.model_copy(deep=True), scope or NO_SCOPE, **where)
    ids = [e.evidence_id for e in item.evidence]
    review = []
    for index, evidence in enumerate(item.evidence):
        if ids.index(evidence.evidence_id) != index:
            raise InputError(f"evidence id '{evidence.evidence_id}' is given twice in this item",
                             field=f"evidence[{index}].evidence_id", **where)
        why = _anchor(evidence, evidence.kb_snapshot or record.kb_snapshot, locator, kb_snapshot,
                      f"evidence[{index}]", where)
        review += [why] if why else []
    for index, point in enumerate(item.key_points):
        unknown = [i for i in point.evidence_ids if i not in ids]
        if unknown:
            raise InputError(f"cites {', '.join(unknown)}, not evidence of this item ({', '.join(ids) or 'none'})",
                             field=f"key_points[{index}].evidence_ids", **where)
    if not item.answerable and any(e.grade > 0 for e in item.evidence):
        raise InputError("an unanswerable item cannot have relevant evidence", field="answerable", **where)
    if item.production is not None and item.production.retrieved and record.kb_snapshot != kb_snapshot:
        raise InputError(f"chunk ids of KB snapshot {record.kb_snapshot}, not of {kb_snapshot}: import against "
                         f"{record.kb_snapshot}, then `curate remap` carries them", field="production.retrieved",
                         **where)
    item.kb_snapshot = kb_snapshot
    origin = f"{Path(raw.file).name}:{raw.line}"
    if review and item.status in ("labelled", "verified"):
        item.set_status("draft", f"imported from {origin}: {'; '.join(review)}", by="curate import")
    else:
        item.set_status(item.status, f"imported from {origin}", by="curate import")
    return item


def summarize_locations(items: Sequence[EvalItem]) -> Counter:
    """Return how many evidence entries were anchored by each method."""
    return Counter(e.located_by for item in items for e in item.evidence)
