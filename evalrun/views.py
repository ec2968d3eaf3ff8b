"""How a run's numbers are put into words, the same in the terminal (`evalrun show`, `evalrun compare`)
and on the report's page: a metric's mean, interval and n, and the order metrics are listed in; what
went wrong with the traces and the judge, in one line each; and what to run after a run."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from evalrun import numbers
from evalrun.records import (
    MANIFEST,
    SUMMARY,
    EndToEnd,
    ItemScores,
    LatencySummary,
    MetricSummary,
    RunManifest,
    JudgedRetrieval,
    RunSummary,
)
from evalrun.scope_records import LAYERS, ScopeSummary, TargetScope

ATTRIBUTIONS = ("permission_leak", "target_failed", "retrieval_miss", "context_cut", "generation_miss",
                "stale_evidence", "hallucination", "false_refusal", "false_answer")
INTERVALS = ("95% CI: a percentile bootstrap, one set of resamples for every metric and subset; W: a Wilson interval "
             "(0/1 values on fewer than 100 items, or all equal)")
OTHER = ("context/key_point_coverage", "lexical/", "generation/", "unanswerable/", "success")
LEXICAL = ("lexical: no judge scored these items; generation_miss by string match, not by meaning: the evidence "
           "reached the context and the answer holds no accepted answer and misses half of a key point's tokens or "
           "one of its numbers (without key points: token F1 below 0.5, or the accepted answers' number)")


def format_summary(summary: MetricSummary | None) -> tuple:
    """Return (mean, 95% CI, n) as printed: n says how many failed and how many are unscored."""
    if not summary:
        return ("", "", "")
    unscored = sum(summary.unscored.values())
    notes = [f"{summary.failed} failed"] if summary.failed else []
    if unscored:
        notes.append(f"+{unscored} unscored")
    n = f"{summary.n}" + (f" ({', '.join(notes)})" if notes else "")
    if summary.mean is None:
        return ("unscored", "", n)
    ci = summary.ci95
    mark = " W" if summary.ci_method == "wilson" else ""
    return (f"{summary.mean:.3f}", f"[{ci[0]:.3f}, {ci[1]:.3f}]{mark}" if ci else "", n)


def retrieval_names(metrics: dict[str, MetricSummary]) -> list[str]:
    """Return the retrieval metric names (without the layer) in display order: by metric, then K."""
    names = {n.split("/", 1)[1] for n in metrics if n.startswith(("candidates/", "context/"))
             and "@" in n}
    return sorted(names, key=lambda n: (n.split("@")[0], int(n.split("@")[1])))


def judged_names(metrics: dict[str, MetricSummary]) -> list[str]:
    """Return the judged retrieval metric names (without judged/ and the layer) in display order."""
    names = {n.split("/", 2)[2] for n in metrics if n.startswith(("judged/candidates/", "judged/context/")) and "@" in n}
    return sorted(names, key=lambda n: (n.split("@")[0], int(n.split("@")[1])))


def judged_lines(section: JudgedRetrieval | None, examples: int = 3) -> list[str]:
    """Return what the judge did for retrieval, in words: who graded, what was not graded and why, the
    items whose only retrieval figures these are, possibly missing evidence, agreement with the labels."""
    if section is None:
        return []
    if section.status != "scored":
        return [f"retrieval judged (--judge-retrieval): {section.status.removeprefix('unscored: ')}: the judged/ "
                f"metrics are unscored, not 0"]
    lines = [f"retrieval judged by model {section.model}: the top {section.k} candidates and the context of "
             f"{section.items:,} items graded 0/1/2 ({section.chunks:,} chunks: "
             + ", ".join(f"{section.grades.get(g, 0):,} graded {g}" for g in ("2", "1", "0"))
             + "); judged/ metrics are the judge's, apart from the labelled ones"]
    if section.unlabelled_items:
        lines.append(f"{section.unlabelled_items:,} of them have no labelled evidence: judged/ are their only "
                     f"retrieval figures")
    if section.budget_refused:
        lines.append(f"JUDGE BUDGET REACHED ({section.budget}): {section.budget_refused:,} grading requests not sent; "
                     f"their items' judged/ metrics are unscored")
    for why, n in sorted(section.not_graded.items(), key=lambda kv: -kv[1]):
        lines.append(f"{n:,} chunks not graded: {why}")
    if section.possibly_missing:
        chunks = sum(len(c) for c in section.possibly_missing.values())
        shown = "; ".join(f"{item}: {', '.join(c[:3])}" for item, c in list(section.possibly_missing.items())[:examples])
        lines.append(f"possibly missing evidence: {chunks:,} chunks graded 2 on {len(section.possibly_missing):,} "
                     f"labelled items are neither evidence nor a copy of it, e.g. {shown} (curate annotate push "
                     f"--suggest-from RUN puts them before annotators)")
    found = section.agreement
    if found is not None:
        kappa = "undefined" if found.kappa is None else f"{found.kappa:.2f}" + (
            f" [{found.kappa_ci95[0]:.2f}, {found.kappa_ci95[1]:.2f}]" if found.kappa_ci95 else "")
        per = "; ".join(f"{lang} {a.agreement:.0%} of {a.chunks:,}" for lang, a in section.agreement_by_language.items()
                        if a.agreement is not None)
        share = "-" if found.agreement is None else f"{found.agreement:.0%}"
        lines.append(f"judge vs labelled evidence on {found.chunks:,} graded chunks of {found.items:,} labelled items "
                     f"(unlabelled counted as 0): agreement {share}, kappa {kappa}"
                     + (f" ({per})" if len(section.agreement_by_language) > 1 else ""))
    return lines


def other_names(metrics: dict[str, MetricSummary]) -> list[str]:
    """Return the non-retrieval metric names in display order."""
    return [n for prefix in OTHER for n in sorted(metrics) if n.startswith(prefix) or n == prefix]


def attribution_names(row: ItemScores) -> list[str]:
    """Return an item's attributions as shown: one made by string match, not a judge, marked "(lexical)"."""
    return [f"{a} (lexical)" if a in row.lexical_attribution else a for a in row.attribution]


def problem_lines(summary: RunSummary, width: int = 220) -> list[str]:
    """Return one line per kind of trace problem: how many items have it, and the first one in full.

    >>> summary = RunSummary.model_construct(problems={"unknown trace key": 5}, problem_examples={
    ...     "unknown trace key": "t-1: unknown trace keys (ignored): retrieved (did you mean candidates?)"})
    >>> problem_lines(summary)
    ['5 items: unknown trace key, e.g. t-1: unknown trace keys (ignored): retrieved (did you mean candidates?)']
    """
    lines = []
    for kind, n in sorted(summary.problems.items(), key=lambda kv: (-kv[1], kv[0])):
        example = summary.problem_examples.get(kind)
        line = f"{n} item{'s' if n != 1 else ''}: {kind}" + (f", e.g. {' '.join(example.split())}" if example else "")
        lines.append(line if len(line) <= width else line[:width - 1] + "…")
    return lines


JUDGED = "the judged metrics (generation/*)"


def judge_lines(summary: RunSummary, width: int = 220) -> list[str]:
    """Return what the judge did, in words: scored by which judge, or why no judge scored and that its
    metrics are unscored (not 0); then one line per kind of question it gave no verdict on."""
    judge = summary.judge
    status = summary.layers.get("generation") or (judge.status if judge else "unscored: no judge")
    if judge is None or judge.status != "scored":
        why = status.removeprefix("unscored: ")
        absent = judge.absent if judge is not None else None
        if absent == "no-judge":
            return [f"no judge (--no-judge): {JUDGED} were not computed; counted as unscored, not 0"]
        if absent == "not-configured":
            return [f"no judge configured: {JUDGED} are counted as unscored, not 0 (docs/how-to/judge.md)"]
        if absent == "unreachable":
            return [f"{why}: {JUDGED} are unscored, not 0; start it, fix [judge] in curate.toml, or pass "
                    f"--no-judge"]
        return [f"generation layer: {status}"]
    config = judge.config or {}
    lines = [f"generation layer: scored by model {config.get('model')} at {config.get('base_url')}"]
    for kind, n in sorted(judge.unscored.items(), key=lambda kv: (-kv[1], kv[0])):
        example = judge.unscored_examples.get(kind)
        line = (f"the judge gave no verdict on {n} question{'s' if n != 1 else ''}: {kind}"
                + (f", e.g. {' '.join(example.split())}" if example else "") + "; those metrics are unscored")
        lines.append(line if len(line) <= width else line[:width - 1] + "…")
    return lines


def _shown(path: Path) -> str:
    """Return a path as a reader would type it from here: relative when under the current folder."""
    path = Path(os.path.abspath(path))
    try:
        path = path.relative_to(Path.cwd())
    except ValueError:
        pass
    return shlex.quote(str(path))


def next_steps(folder: Path, workspace_root: Path) -> list[str]:
    """Return the lines that end a run: the run folder it wrote, and the commands that read it (show,
    report, compare against the latest other run of the same release beside it, else BASE)."""
    folder = Path(folder)
    manifest = RunManifest.read(folder / MANIFEST)
    others = []
    for sibling in folder.parent.iterdir() if folder.parent.is_dir() else ():
        if sibling != folder and (sibling / SUMMARY).is_file() and (sibling / MANIFEST).is_file():
            try:
                other = RunManifest.read(sibling / MANIFEST)
            except Exception:  # noqa: BLE001 - a folder that is not a readable run is simply not suggested
                continue
            if other.content_sha256 == manifest.content_sha256:
                others.append((other.started_at, sibling))
    base = _shown(max(others)[1]) if others else "BASE"
    here = Path.cwd().resolve()
    root = Path(workspace_root).resolve()
    where = "" if here == root or here.is_relative_to(root) else f" --workspace {_shown(root)}"
    run = _shown(folder)
    return [f"run folder: {run}",
            f"next: evalrun show {run} --failures",
            f"      evalrun report {run} --out {_shown(folder / 'report.html')}{where}",
            f"      evalrun compare {base} {run}{where}   (BASE: "
            + (f"{base}, the latest other run of {manifest.ref})" if others else f"another run of {manifest.ref})")]


def system_tokens(e2e: EndToEnd, items: int) -> str:
    """Return the system's tokens as a person reads them: the sums over the items whose trace reported
    them, how many those are, or that none did (unknown, never 0).

    >>> system_tokens(EndToEnd(system_tokens={"prompt_tokens": 12345, "completion_tokens": 678}, usage_reported=8), 8)
    'system tokens: 12,345 prompt + 678 completion'
    >>> system_tokens(EndToEnd(system_tokens={"prompt_tokens": 500, "completion_tokens": 20}, usage_reported=3), 8)
    'system tokens: 500 prompt + 20 completion (reported by 3 of 8 items)'
    >>> system_tokens(EndToEnd(system_tokens={"prompt_tokens": 0, "completion_tokens": 0}, usage_reported=0), 8)
    'system tokens: not reported by the system (unknown, not 0)'
    >>> system_tokens(EndToEnd(system_tokens={"prompt_tokens": 0, "completion_tokens": 0}), 8)
    'system tokens: not reported by the system (unknown, not 0)'
    """
    tokens = e2e.system_tokens
    # a summary scored before the reports were counted (None): no token at all is read as none reported
    if e2e.usage_reported == 0 or (e2e.usage_reported is None and not any(tokens.values())):
        return "system tokens: not reported by the system (unknown, not 0)"
    text = f"system tokens: {tokens.get('prompt_tokens', 0):,} prompt + {tokens.get('completion_tokens', 0):,} completion"
    if e2e.usage_reported is not None and e2e.usage_reported < items:
        text += f" (reported by {e2e.usage_reported:,} of {items:,} items)"
    return text


def _calls(n: int) -> str:
    return f"{n:,} call{'s' if n != 1 else ''}"


def latency_line(e2e: EndToEnd) -> str | None:
    """Return which calls the latency figures are over and the warm-up calls left out of them (or that
    every call was one, so there are none); None when the run has no latency (a TREC run).

    >>> total = LatencySummary(n=57, p50=850.0, p95=1243.0, max=2000.0)
    >>> latency_line(EndToEnd(latency_ms={"total": total}, warmup_calls=4,
    ...                       warmup_ms=LatencySummary(n=4, p50=900.0, p95=14000.0, max=16512.0)))
    'latency over 57 calls; 4 warm-up calls left out (slowest 16.5 s)'
    >>> latency_line(EndToEnd(warmup_calls=2, warmup_ms=LatencySummary(n=2, p50=500.0, p95=600.0, max=610.0)))
    'latency: none measured, every call (2) was a warm-up call (slowest 610 ms); --warmup 0 counts them'
    """
    # a trace is in each stage at most once: the calls are the most any stage holds, and the failed ones
    stages = {stage: v.n for stage, v in e2e.latency_ms.items() if v}
    failed = stages.pop("failed calls", 0)
    measured = max(stages.values(), default=0) + failed
    slowest = f" (slowest {numbers.ms(e2e.warmup_ms.max)})" if e2e.warmup_ms else ""
    if not measured:
        if not e2e.warmup_calls:
            return None
        return (f"latency: none measured, every call ({e2e.warmup_calls:,}) was a warm-up call{slowest}; "
                f"--warmup 0 counts them")
    line = f"latency over {_calls(measured)}"
    if e2e.warmup_calls:
        line += f"; {e2e.warmup_calls:,} warm-up call{'s' if e2e.warmup_calls != 1 else ''} left out{slowest}"
    return line


def latency_rows(e2e: EndToEnd) -> list[tuple[str, str, str, str, str]]:
    """Return one row per latency stage: its name, n, p50, p95 and max as a person reads them."""
    return [(stage, f"{v.n:,}", numbers.ms(v.p50), numbers.ms(v.p95), numbers.ms(v.max))
            for stage, v in e2e.latency_ms.items() if v]


def not_received_line(target: TargetScope | None, missing: list[str], askers: int, moments: int) -> str | None:
    """Return the one line saying that the system could not be told the asker or the moment the items name
    (`missing`: asker_groups, as_of), so it cannot filter by them; None when nothing is missing.

    >>> not_received_line(TargetScope(receives=[], how="keyword arguments"), ["asker_groups"], 12, 0)
    'the target cannot receive asker_groups (its signature takes no such keyword argument, nor **kwargs): it cannot filter by scope (12 items name an asker)'
    """
    if not missing or target is None:
        return None
    def items(n: int) -> str:
        return f"{n:,} item{'s' if n != 1 else ''} name{'s' if n == 1 else ''}"
    named = ", ".join(part for part in (f"{items(askers)} an asker" if askers else "",
                                        (f"{moments:,}" if askers else items(moments)) + " a moment" if moments else "")
                      if part)
    fields = " or ".join(missing)
    if target.how == "logged traces":
        return (f"the traces were logged by the system itself: evalrun could not give it {fields} ({named}); the "
                f"leaks and stale chunks below say whether it filtered by scope")
    return (f"the target cannot receive {fields} (its signature takes no such keyword argument, nor **kwargs): it "
            f"cannot filter by scope ({named})")


def _items(n: int) -> str:
    return f"{numbers.count(n)} item{'s' if n != 1 else ''}"


def _listed(ids: list[str], limit: int) -> str:
    return ", ".join(ids[:limit]) + (f", ... and {len(ids) - limit:,} more" if len(ids) > limit else "")


def leak_lines(scope: ScopeSummary | None, rows: list[ItemScores] | None = None, shown: int = 10) -> list[str]:
    """Return the permission leak lines a run's views open with: the finding (or that none was found, or
    that none could be checked) in the first line, then per layer the items and chunks that leaked (the
    first `shown` items, with their chunks when `rows` are given). Empty when the run was scored before
    scope was checked, or when no chunk has access groups and no item names an asker.

    >>> from evalrun.scope_records import LayerScope
    >>> scope = ScopeSummary(scoped=True, access_groups=True, settings_digest="d", askers=4, unchecked=1,
    ...     permission_leaks={"candidates": LayerScope(checked=4, items=1, chunks=2, item_ids=["pay"]),
    ...                       "context": LayerScope(checked=4, items=0, chunks=0),
    ...                       "citations": LayerScope(checked=4, items=0, chunks=0)}, permission_leak_items=["pay"])
    >>> leak_lines(scope)[:2]
    ['PERMISSION LEAKS: 1 item of the 4 that name an asker was given chunks its asker may not see (1 item names no asker: unchecked)', '  candidates: 1 item, 2 chunks: pay']
    """
    if scope is None:
        return []
    unchecked = f"{_items(scope.unchecked)} name{'s' if scope.unchecked == 1 else ''} no asker: unchecked"
    if not scope.access_groups:
        return ([f"permission leaks: none possible, no chunk of the KB has access groups ({_items(scope.askers)} "
                 f"name{'s' if scope.askers == 1 else ''} an asker)"] if scope.askers else [])
    if not scope.askers:
        return [f"PERMISSION LEAKS NOT CHECKED: the KB has access groups and no item names an asker (asker_groups): "
                f"all {_items(scope.unchecked)} unchecked"]
    leaked = scope.permission_leak_items
    tail = f" ({unchecked})" if scope.unchecked else ""
    if not leaked:
        lines = [f"permission leaks: none, in the {_items(scope.askers)} that name an asker{tail}"]
    else:
        were = "was" if len(leaked) == 1 else "were"
        its = "its" if len(leaked) == 1 else "their"
        lines = [f"PERMISSION LEAKS: {_items(len(leaked))} of the {numbers.count(scope.askers)} that name an asker "
                 f"{were} given chunks {its} asker may not see{tail}"]
    by_id = {row.item_id: row for row in rows or () if row.scope is not None}
    for layer in LAYERS:
        found = scope.permission_leaks.get(layer)
        if found is None:
            continue
        unreported = scope.askers - found.checked
        note = f" ({_items(unreported)} do not report it: unchecked)" if unreported else ""
        if not found.items:
            if unreported and leaked:
                lines.append(f"  {layer}: none{note}")
            continue
        named = [f"{i} ({', '.join(by_id[i].scope.leaked.get(layer, []))})" if i in by_id else i
                 for i in found.item_ids]
        lines.append(f"  {layer}: {_items(found.items)}, {numbers.count(found.chunks)} chunk{'s' if found.chunks != 1 else ''}"
                     f": {_listed(named, shown)}{note}")
    return lines


def scope_lines(scope: ScopeSummary | None) -> list[str]:
    """Return what else scope says of a run, one line each: the scope fields the target could not be
    given, the items left with no usable evidence, the stale chunks per layer and the answers built on
    them, moments and validities that could not be compared, `supersedes` naming nothing."""
    if scope is None:
        return []
    lines = []
    if cannot := not_received_line(scope.target, scope.not_received, scope.askers, scope.moments):
        lines.append(cannot)
    if scope.declined_items:
        why = ", ".join(f"{reason} {n:,}" for reason, n in scope.declined.items())
        one = len(scope.declined_items) == 1
        lines.append(f"{_items(len(scope.declined_items))} had no evidence {'its' if one else 'their'} asker may use at "
                     f"{'its' if one else 'their'} moment ({why}): scored as {'an item' if one else 'items'} the system "
                     f"should decline (unanswerable/*), not as {'a retrieval miss' if one else 'retrieval misses'}")
    stale = [f"{layer} {_items(found.items)}, {numbers.count(found.chunks)} chunk{'s' if found.chunks != 1 else ''}"
             for layer in LAYERS if (found := scope.stale.get(layer)) is not None and found.items]
    if stale:
        built = len(scope.stale_evidence_items)
        lines.append(f"stale chunks (not holding at the item's moment): {'; '.join(stale)}; "
                     f"{_items(built)} answered from them (stale_evidence)")
    if scope.undecided:
        lines.append(f"{_items(scope.undecided)}: a date moment met a chunk with only a version label (or the reverse); "
                     f"not comparable, counted as holding")
    if scope.unknown_superseded:
        lines.append(f"supersedes names {len(scope.unknown_superseded):,} ids that are no document or chunk of the "
                     f"snapshot: {_listed(scope.unknown_superseded, 5)}")
    return lines
