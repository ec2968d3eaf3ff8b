"""The items of a report as one compact JSON document, which the page's script renders on demand
(rows a page at a time, an item's details when it is opened): a 10,000-item run rendered as static
HTML weighs and costs too much for a browser (benchmarks/report_speed.py).

Layout (short keys, empty fields left out):

- ``chunks``: every chunk any item shows, once: ``id`` and ``text`` (None when neither the KB
  snapshot nor the trace has it); items refer to chunks by their position here.
- ``metrics`` and ``values``: ``values[m][i]`` is metric ``metrics[m]`` of item ``i`` (None: no
  value; the item's ``u`` says why, as pairs of metric and ``reasons`` positions).
- ``fields``: the values of difficulty, qtype, source, split and tag; an item's ``f`` holds the
  positions of its first four, ``tg`` of its tags.
- per item: ``q`` question, ``ref`` reference answer, ``kp`` key points [text, evidence ids],
  ``ev`` evidence [id, grade, text, chunks], ``c`` candidates [chunk, gold group or None, score],
  ``x`` context [chunk, gold group] (None: not reported), ``o`` answer, ``cl`` claims [text,
  verdict, reason], ``kv`` key point verdicts, ``rv`` relevance verdict, ``cv`` citations [chunk,
  correct], ``at`` attribution, ``rk`` rank of the first relevant candidate (0: none), ``ic``
  every relevant group in the context, ``cd`` a relevant chunk cited, ``fl`` flips against BASE [metric, change, BASE's attribution],
  ``ms`` total latency, ``tk`` tokens and ``usd`` cost of the system on this item (when the run recorded them),
  ``ak`` its asker and moment [asker groups (None: not named), role, as_of], ``sc`` what scope found:
  ``lk`` {layer: leaked chunks}, ``st`` {layer: stale chunks}, ``dc`` reasons it had no usable evidence,
  ``sa`` why its answer was taken as built on stale chunks, ``ur`` layers not reported (not checked),
  ``ue`` its evidence the asker may not use at its moment [evidence id, reasons] (no gold mark);
  what the judge graded of its retrieval (--judge-retrieval): ``jg`` [chunk, grade 0/1/2, reason, the
  chunk with the same text graded for it or None], ``jn`` [chunk, why not graded], ``jm`` chunks that are
  possibly missing evidence (graded 2, neither evidence nor a copy of it).

``judged`` (a run made with --judge-retrieval): ``status`` ("scored", or why not), ``k`` (candidates graded
per item) and ``problem`` (why the grades could not be read, None when they were).

With a BASE run, ``base`` says which (``target``, ``folder``, ``note``), and each item BASE scored has
``b``: BASE's ``o``, ``x``, ``at``, ``u``, ``fa``, ``er``, ``ap``, ``ms``, ``tk``, ``usd`` as above, and
``v``: BASE's values where they differ from NEW's, [metric, value or None (no value)] (every other
metric has NEW's value in BASE too: two similar runs cost little); no ``b``: BASE did not score the
item. BASE's chunk texts share the one chunk budget with NEW's; BASE's answers share their own
(``base`` ``answer_cap``, ``answer_budget``: `BASE_ANSWER_BUDGET`, each at most the answer's cap), and
every cut is counted ("BASE answer").

Texts are capped (`CAPS`, and chunk texts under one budget, `chunk_cap`); a cut text is the pair
[shown text, full length] so the page says it is cut, and every cut is counted (`Cuts`).
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Sequence

import numpy as np

from curate import progress
from evalrun.views import ATTRIBUTIONS, attribution_names
from evalrun.report.gather import ReportInputs, cited_ids
from evalrun.scoring.summary import SUBSET_FIELDS

# Characters of each text an item shows; the judge saw at most 1,500 characters of a chunk.
CAPS = {"question": 1_000, "reference answer": 2_000, "key point": 500, "evidence": 1_500, "answer": 4_000,
        "claim": 1_000, "judge reason": 1_000, "problem": 300}
CHUNK_CAP = 2_000
# Characters of chunk text in one page: with the item texts, a 10,000-item run stays under 15 MB.
CHUNK_BUDGET = 3_000_000
# Characters of BASE's answers in one page (each at most CAPS["answer"]): on a 10,000-item run whose
# every answer differs from NEW's, about 2 MB more in the page instead of 9.
BASE_ANSWER_BUDGET = 1_000_000
GROUP_PREFIX = "group:"


class Cuts(Counter):
    """Texts cut to their cap, by kind of text."""


def chunk_cap(lengths: Sequence[int], budget: int = CHUNK_BUDGET, cap: int = CHUNK_CAP) -> int:
    """Return the largest per-chunk cap (at most `cap`) under which the chunks' texts of `lengths`
    fit in `budget` characters: every chunk keeps min(length, cap).

    >>> chunk_cap([100, 100, 1000], budget=600, cap=2000)   # 100 + 100 + 400
    400
    >>> chunk_cap([100, 100], budget=600, cap=50)
    50
    """
    ordered = sorted(lengths)
    if sum(min(n, cap) for n in ordered) <= budget:
        return cap
    low, high = 0, cap
    prefix = [0]
    for n in ordered:
        prefix.append(prefix[-1] + n)
    while low < high:       # the largest c with sum(min(n, c)) <= budget
        middle = (low + high + 1) // 2
        shorter = bisect.bisect_left(ordered, middle)
        if prefix[shorter] + middle * (len(ordered) - shorter) <= budget:
            low = middle
        else:
            high = middle - 1
    return low


def capped(text: str | None, kind: str, cuts: Cuts, cap: int | None = None):
    """Return `text`, or [its first `cap` characters, its length] when longer (counted in `cuts`).

    >>> cuts = Cuts()
    >>> capped("abcdef", "answer", cuts, cap=4), capped("ab", "answer", cuts, cap=4), cuts["answer"]
    (['abcd', 6], 'ab', 1)
    """
    limit = CAPS[kind] if cap is None else cap
    if text is None or len(text) <= limit:
        return text
    cuts[kind] += 1
    return [text[:limit], len(text)]


def _column(values: dict[int, float], items: int) -> list:
    """Return one metric's values over the items as JSON says them shortest: 4 decimals, whole
    numbers without ".0", None where an item has no value.

    >>> _column({0: 1.0, 2: 0.123456}, 3)
    [1, None, 0.1235]
    """
    column = np.full(items, np.nan)
    if values:
        column[np.fromiter(values, dtype=np.intp, count=len(values))] = np.fromiter(values.values(), dtype=np.float64,
                                                                                  count=len(values))
    column = np.round(column, 4)
    return [None if v != v else int(v) if v.is_integer() else v for v in column.tolist()]


def _verdict(said: dict | None, cuts: Cuts) -> list | None:
    """Return [verdict, reason] of one judge answer, or [None, why unscored]."""
    if not said:
        return None
    if "unscored" in said:
        return [None, capped(said["unscored"], "judge reason", cuts)]
    return [said["verdict"], capped(said.get("reason") or "", "judge reason", cuts)]


class _Table(dict):
    """Positions of strings in a list, each string once."""

    def at(self, value: str) -> int:
        if value not in self:
            self[value] = len(self)
        return self[value]

    def values_list(self) -> list[str]:
        return list(self)


def item_payload(inputs: ReportInputs) -> tuple[dict, Cuts]:
    """Return the items' JSON document (see the module's docstring) and the texts it cut."""
    cuts = Cuts()
    rows = inputs.rows
    chunk_index, chunk_text = _Table(), {}
    fields = {name: _Table() for name in (*SUBSET_FIELDS, "tag")}
    metrics = _Table()
    reasons, attributions = _Table(), _Table()
    for name in ATTRIBUTIONS:
        attributions.at(name)
    flips: dict[str, list] = {}
    if inputs.comparison is not None:
        for flip in inputs.comparison.flips:
            flips.setdefault(flip.item_id, []).append((flip.metric, flip.change, flip.base_attribution))

    # BASE against another KB snapshot: the same chunk id may hold another text there
    apart_snapshot = inputs.base is not None and inputs.base.manifest.kb_snapshot != inputs.run.manifest.kb_snapshot

    def chunk(chunk_id: str, passage_text: str | None = None, base: bool = False) -> int:
        key = ("base", chunk_id) if base and apart_snapshot else chunk_id
        position = chunk_index.at(key)
        if chunk_text.get(key) is None:
            known = (inputs.base_chunks if base and apart_snapshot else inputs.chunks).get(chunk_id)
            chunk_text[key] = known.text if known is not None else passage_text
        return position

    items, values = [], {}
    for position, item in enumerate(progress(inputs.items, "gathering items")):
        row = rows.get(item.id)
        trace = inputs.traces.get(item.id)
        target = inputs.targets.get(item.id)
        chunk_group = target[1] if target else {}

        def group(chunk_id: str) -> str | None:
            """Return the evidence groups a chunk finds, for display ("e1" or "e1, e3"), or None."""
            names = chunk_group.get(chunk_id)
            return ", ".join(n[len(GROUP_PREFIX):] if n.startswith(GROUP_PREFIX) else n for n in names) if names else None

        entry: dict = {"id": item.id, "q": capped(item.question, "question", cuts), "l": item.language,
                       "a": int(item.answerable),
                       "f": [fields[name].at(getattr(item, name) or "none") for name in SUBSET_FIELDS]}
        if item.tags:
            entry["tg"] = [fields["tag"].at(tag) for tag in item.tags]
        if item.reference_answer:
            entry["ref"] = capped(item.reference_answer, "reference answer", cuts)
        if item.key_points:
            entry["kp"] = [[capped(k.text, "key point", cuts), k.evidence_ids] for k in item.key_points]
        if item.evidence:
            entry["ev"] = [[e.evidence_id, e.grade, capped(e.text, "evidence", cuts),
                            [chunk(c) for c in e.chunk_ids]] for e in item.evidence]
        if target is not None:
            entry.update(_funnel_marks(target, trace, row))
        if trace is not None:
            entry["c"] = (None if trace.candidates is None else
                          [[chunk(p.chunk_id, p.text), group(p.chunk_id), p.score] for p in trace.candidates])
            entry["x"] = (None if trace.context is None else
                          [[chunk(p.chunk_id, p.text), group(p.chunk_id)] for p in trace.context])
            if trace.answer is not None:
                entry["o"] = capped(trace.answer, "answer", cuts)
            if trace.citations:
                entry["ci"] = [chunk(c) for c in trace.citations]
            if trace.mode != "normal":
                entry["md"] = trace.mode
            if trace.error:
                entry["er"] = capped(trace.error, "problem", cuts)
        entry.update(end_to_end(row, trace))
        if item.asker_groups is not None or item.asker_role is not None or item.as_of is not None:
            entry["ak"] = [item.asker_groups, item.asker_role, item.as_of]
        graded = inputs.judged.grades.get(item.id)
        if graded is not None:
            entry.update(judged_entry(graded, chunk, cuts))
        if row is not None:
            _scores(entry, row, position, values, metrics, reasons, attributions, chunk, cuts)
            if row.scope is not None:
                entry["sc"] = scope_entry(row.scope, chunk, cuts)
        base_row = inputs.base_rows.get(item.id)
        if base_row is not None:
            entry["b"] = _base_entry(base_row, inputs.base_traces.get(item.id), row.values if row else {}, metrics,
                                     reasons, attributions, lambda c, t=None: chunk(c, t, base=True), group, cuts)
        if item.id in flips:
            entry["fl"] = [[metrics.at(metric), change, [attributions.at(a) for a in before]]
                           for metric, change, before in flips[item.id]]
        items.append(entry)
    keys = chunk_index.values_list()
    cap = chunk_cap([len(chunk_text[c]) for c in keys if chunk_text[c] is not None], CHUNK_BUDGET)
    texts = [capped(chunk_text[c], "chunk", cuts, cap=cap) if chunk_text[c] is not None else None for c in keys]
    ids = [key[1] if isinstance(key, tuple) else key for key in keys]
    names = metrics.values_list()
    document = {"chunks": {"id": ids, "text": texts, "cap": cap, "budget": CHUNK_BUDGET}, "metrics": names,
                "values": [_column(values.get(name, {}), len(items)) for name in names],
                "reasons": reasons.values_list(),
                "attributions": attributions.values_list(),
                "fields": {name: table.values_list() for name, table in fields.items()}, "items": items}
    section = inputs.run.summary.judged_retrieval
    if section is not None:
        document["judged"] = {"status": section.status, "k": section.k, "problem": inputs.judged.problem}
    if inputs.base is not None:
        document["base"] = {"target": inputs.base.manifest.target, "folder": str(inputs.base.folder),
                            "answer_cap": _cap_base_answers(items, cuts), "answer_budget": BASE_ANSWER_BUDGET,
                            "note": (f"BASE ran against KB snapshot {inputs.base.manifest.kb_snapshot}, NEW against "
                                     f"{inputs.run.manifest.kb_snapshot}: gold marks are those of NEW's release"
                                     if apart_snapshot else None)}
    return document, cuts


def scope_entry(scope, chunk, cuts: Cuts) -> dict:
    """Return what scope found of one item (``sc``): leaked and stale chunks per layer (positions in the
    chunk table), why it had no usable evidence, why its answer is taken as built on stale chunks."""
    found: dict = {}
    if scope.leaked:
        found["lk"] = {layer: [chunk(c) for c in ids] for layer, ids in scope.leaked.items()}
    if scope.stale:
        found["st"] = {layer: [chunk(c) for c in ids] for layer, ids in scope.stale.items()}
    if scope.declined_because:
        found["dc"] = scope.declined_because
    if scope.stale_answer:
        found["sa"] = capped(scope.stale_answer, "problem", cuts)
    if scope.unreported:
        found["ur"] = scope.unreported
    if scope.unusable:
        found["ue"] = [[u.evidence_id, u.reasons] for u in scope.unusable]
    return found


def judged_entry(graded, chunk, cuts: Cuts) -> dict:
    """Return what the judge graded of one item's retrieval (``jg``, ``jn``, ``jm``: chunks as positions in
    the chunk table), its reasons capped as the judge's other reasons are."""
    found: dict = {}
    if graded.grades:
        found["jg"] = [[chunk(g.chunk_id), g.grade, capped(g.reason, "judge reason", cuts),
                        None if g.copy_of is None else chunk(g.copy_of)] for g in graded.grades]
    if graded.not_graded:
        found["jn"] = [[chunk(c), capped(why, "problem", cuts)] for c, why in graded.not_graded.items()]
    if graded.possibly_missing:
        found["jm"] = [chunk(c) for c in graded.possibly_missing]
    return found


def end_to_end(row, trace) -> dict:
    """Return an item's total latency (``ms``), tokens (``tk``) and cost (``usd``) as far as its run recorded
    them: latency from the trace, tokens and cost from the scores' per-item end-to-end values (runs scored
    before those were recorded have none: absent, never 0)."""
    found = {}
    if trace is not None and "total" in trace.latency_ms:
        found["ms"] = round(trace.latency_ms["total"], 1)
    e2e = getattr(row, "end_to_end", None)
    if e2e is not None:
        if getattr(e2e, "tokens", None) is not None:
            found["tk"] = e2e.tokens
        if getattr(e2e, "cost", None) is not None:
            found["usd"] = e2e.cost
    return found


def _base_entry(row, trace, new_values: dict[str, float], metrics: _Table, reasons: _Table, attributions: _Table,
                chunk, group, cuts: Cuts) -> dict:
    """Return what the item view shows of BASE beside NEW (`new_values`: NEW's values of the item): its
    answer, its context with the gold chunks marked, its attribution, why it failed or has no value,
    and its values where they differ from NEW's."""
    entry: dict = end_to_end(row, trace)
    changed = [[metrics.at(name), round(value, 4)] for name, value in row.values.items()
               if name not in new_values or round(new_values[name], 4) != round(value, 4)]
    changed += [[metrics.at(name), None] for name in new_values if name not in row.values]
    if changed:
        entry["v"] = changed
    if row.unscored:
        entry["u"] = [[metrics.at(name), reasons.at(reason)] for name, reason in sorted(row.unscored.items())]
    if row.attribution:
        entry["at"] = [attributions.at(a) for a in attribution_names(row)]
    for key, text in (("fa", row.failed), ("ap", row.apart)):
        if text:
            entry[key] = capped(text, "problem", cuts)
    if trace is not None:
        entry["x"] = (None if trace.context is None else
                      [[chunk(p.chunk_id, p.text), group(p.chunk_id)] for p in trace.context])
        if trace.answer is not None:
            entry["o"] = trace.answer   # capped once every BASE answer is known (`_cap_base_answers`)
        if trace.error:
            entry["er"] = capped(trace.error, "problem", cuts)
    return entry


def _cap_base_answers(items: list[dict], cuts: Cuts) -> int:
    """Cap BASE's answers in `items` under one budget (`BASE_ANSWER_BUDGET`, each at most the answer's
    cap, counted as "BASE answer" cuts); return the cap."""
    answers = [entry["b"] for entry in items if "o" in entry.get("b", {})]
    cap = chunk_cap([len(b["o"]) for b in answers], BASE_ANSWER_BUDGET, CAPS["answer"])
    for b in answers:
        b["o"] = capped(b["o"], "BASE answer", cuts, cap=cap)
    return cap


def _funnel_marks(target: tuple[dict, dict], trace, row) -> dict:
    """Return an answerable item's row marks: `rk` the rank of the first candidate holding relevant
    evidence (0: none), `ic` every relevant group in the context (None: not reported), `cd` a
    relevant chunk cited."""
    grades, chunk_group = target
    if trace is None or (row is not None and row.failed):
        return {"rk": 0, "ic": 0, "cd": 0}
    rank = (None if trace.candidates is None else
            next((n + 1 for n, p in enumerate(trace.candidates) if p.chunk_id in chunk_group), 0))
    in_context = None
    if trace.context is not None:
        in_context = int(not set(grades) - {g for p in trace.context for g in chunk_group.get(p.chunk_id, ())})
    cited = int(bool(row is not None and cited_ids(trace, row) & set(chunk_group)))
    marks = {"ic": in_context, "cd": cited}
    if rank is not None:   # no candidates reported: no rank, shown as "–"
        marks["rk"] = rank
    return marks


def _scores(entry: dict, row, position: int, values: dict, metrics: _Table, reasons: _Table,
            attributions: _Table, chunk, cuts: Cuts) -> None:
    """Put one item's metric values, unscored reasons, attribution, problems and the judge's verdicts
    into its entry (and its values into the metric columns)."""
    for name, value in row.values.items():
        metrics.at(name)
        values.setdefault(name, {})[position] = value
    if row.unscored:
        entry["u"] = [[metrics.at(name), reasons.at(reason)] for name, reason in sorted(row.unscored.items())]
    if row.attribution:
        entry["at"] = [attributions.at(a) for a in attribution_names(row)]
    if row.problems:
        entry["pr"] = [capped(p, "problem", cuts) for p in row.problems]
    for key, text in (("fa", row.failed), ("ap", row.apart), ("rf", row.refusal)):
        if text:
            entry[key] = capped(text, "problem", cuts)
    details = row.generation or {}
    if details:
        claims = details.get("claims", [])
        claim_verdicts = details.get("claim_verdicts", [])
        entry["cl"] = [[capped(text, "claim", cuts), *(_verdict(claim_verdicts[n], cuts) if n < len(claim_verdicts)
                                                        else [None, None])] for n, text in enumerate(claims)]
        if details.get("key_point_verdicts"):
            entry["kv"] = [_verdict(v, cuts) for v in details["key_point_verdicts"]]
        if details.get("relevance_verdict"):
            entry["rv"] = _verdict(details["relevance_verdict"], cuts)
        if details.get("citation_verdicts"):
            entry["cv"] = [[chunk(v["chunk_id"]), v.get("correct")] for v in details["citation_verdicts"]]
        if details.get("citations_outside_context"):
            entry["co"] = [chunk(c) for c in details["citations_outside_context"]]
