"""`curate generate`: questions made from the KB, each kept only for a stated reason."""

from __future__ import annotations

from collections import Counter

import click

from curate.cli.base import ENGINE_OPTION, push_options, workspace_of
from curate.cli.display import console, short, table
from curate.generate.asking import why_kind
from curate.generate.core import MINED_TYPES, TYPES
from curate.generate.filters import dropped_by
from curate.generate.run import GenerateReport, generate, parse_types


@click.command("generate")
@click.option("--dataset", required=True, help="Dataset the kept questions are added to (created if new).")
@click.option("--kb", help="KB name or snapshot (default: the dataset's).")
@click.option("--n", "n", type=click.IntRange(1, 100_000), default=20, show_default=True,
              help="Questions to keep, over all the types (shared evenly).")
@click.option("--types", default=",".join(MINED_TYPES), show_default=True,
              help=f"Comma-separated question types: {', '.join(TYPES)}.")
@click.option("--seed", type=int, default=0, show_default=True, help="Sampling seed (the same seed, the same sample).")
@click.option("--keep-closed-book", is_flag=True, help="Keep (tagged) questions a model answers without retrieval.")
@click.option("--dry-run", is_flag=True, help="Say what the model would be asked and what it would cost; ask and "
              "write nothing.")
@click.option("--budget", type=click.FloatRange(min=0, min_open=True), metavar="USD",
              help="Stop asking the model before this much is spent (needs a price for the model in curate.toml).")
@click.option("--budget-tokens", type=click.IntRange(min=1), metavar="N",
              help="Stop asking the model before this many tokens are spent.")
@click.option("--show", type=click.IntRange(0, 1000), default=10, show_default=True,
              help="Kept questions to print.")
@click.option("--push", is_flag=True, help="Send the added items to Argilla: a person confirms the evidence and near "
              "misses and accepts, edits or discards each question.")
@push_options
@ENGINE_OPTION
@click.pass_context
def generate_command(ctx: click.Context, dataset: str, kb: str | None, n: int, types: str, seed: int,
                     keep_closed_book: bool, dry_run: bool, budget: float | None, budget_tokens: int | None,
                     show: int, push: bool, pool_k: int, argilla_workspace: str, api_url: str | None,
                     engine: str | None) -> None:
    """Make questions from a KB snapshot: confusable pairs (near codes, near copies that differ in a number,
    date, name or negation) and unanswerable probes, mined without a model; single, multi_evidence and
    conditional questions written by the [generator] (or [judge]) model; filter every candidate in one pass
    (grounded, stands alone, right language, no duplicate, not answerable closed-book) with its reason; add
    the kept ones to DATASET as synthetic drafts a person must review."""
    report = generate(workspace_of(ctx), dataset=dataset, kb=kb, n=n, types=parse_types(types), seed=seed,
                      keep_closed_book=keep_closed_book, dry_run=dry_run, budget=budget, budget_tokens=budget_tokens,
                      push=push, pool_k=pool_k, api_url=api_url, argilla_workspace=argilla_workspace, engine=engine)
    if report.engine:
        click.echo(f"note: mined {report.shards:,} shards of {report.record.kb_snapshot} on {report.engine}", err=True)
    if report.plan is not None:
        _print_plan(report)
        return
    _print(report, show)
    if report.pushed is not None:
        click.echo(f"pushed {report.pushed.pushed} items to Argilla: a person accepts, edits (the corrected "
                   f"question) or discards each; `curate annotate pull --dataset {dataset}` applies what they did")


def _print_plan(report: GenerateReport) -> None:
    """Print what a run would ask of the model and cost, before any call (--dry-run)."""
    record, out = report.record, console()
    for kind, why in record.not_made.items():
        click.echo(f"warning: {kind}: not made: {why}", err=True)
    mined = ", ".join(f"{n} {kind.replace('_', ' ')}" for kind, n in sorted(record.mined.items())) or "nothing"
    out.print(f"{record.dataset}: dry run on KB snapshot {record.kb_snapshot}: mined {mined} ({len(report.candidates):,} "
              f"mined candidates, no model needed); {record.seeds:,} seeds for the model", soft_wrap=True)
    if record.seeds_skipped:
        out.print("seeds skipped: " + "; ".join(f"{n:,} {why}" for why, n in sorted(record.seeds_skipped.items())),
                  soft_wrap=True)
    if not report.plan:
        out.print("no call to a model: nothing to pay")
        return
    rows = [(s.name, f"{s.calls:,}", f"{s.cached:,}", f"{s.input_tokens:,}", f"{s.output_tokens:,}") for s in report.plan]
    out.print(table(None, ("step", "calls", "cached (free)", "input tokens (est.)", "output tokens (at most)"), rows))
    model = record.model
    total = report.plan_cost
    out.print(f"cost at most: ${total:,.4f} ({model}, prices from curate.toml)" if total is not None else
              f"cost: unknown: no price for {model} in curate.toml ([judge.prices] or [generator.prices]); "
              f"--budget-tokens holds the tokens", soft_wrap=True)
    if record.budget:
        out.print(f"budget: {record.budget}")


def _print(report: GenerateReport, show: int) -> None:
    record, out = report.record, console()
    for kind, why in record.not_made.items():
        click.echo(f"warning: {kind}: not made: {why}", err=True)
    mined = ", ".join(f"{n} {kind.replace('_', ' ')}" for kind, n in sorted(record.mined.items())) or "nothing"
    out.print(f"{record.dataset}: run {record.run} on KB snapshot {record.kb_snapshot}: mined {mined}")
    left = {**record.left_out, **record.not_asked}
    if left:
        out.print("left out: " + "; ".join(f"{n} {why}" for why, n in sorted(left.items(), key=lambda x: -x[1])),
                  soft_wrap=True)
    reasons = sorted({key for row in record.by_type.values() for key in row if key.startswith("dropped: ")})
    rows = [(kind, row.get("candidates", 0), row.get("kept", 0), *(row.get(r, 0) for r in reasons))
            for kind, row in record.by_type.items()]
    if rows:
        out.print(table(None, ("type", "candidates", "kept", *reasons), rows))
    if reasons:
        out.print("(a dropped candidate is counted under the first filter it failed; 'sample': it passed every "
                  "filter, but --n was reached)", soft_wrap=True)
    spread = record.spread
    if spread and record.kept:
        out.print(f"spread: kept questions from {spread.asked:,} of {spread.documents:,} documents; the most from one "
                  f"document {spread.top_share:.0%} ({', '.join(spread.top)})", soft_wrap=True)
    if record.kept < record.n:
        out.print(f"kept {record.kept:,} of the {record.n:,} asked for: no other candidate of this KB passed the "
                  f"filters", soft_wrap=True)
    out.print(f"closed-book check: {record.closed_book}", soft_wrap=True)
    if record.model is not None:
        cost = f"${record.cost:,.4f}" if record.cost is not None else "cost unknown (no price in curate.toml)"
        out.print(f"model {record.model}: {record.seeds:,} seeds, {record.calls.get('requests', 0):,} requests, "
                  f"{record.calls.get('from the cache', 0):,} answers from the cache, "
                  f"{sum(record.tokens.values()):,} tokens, {cost}" + (f"; budget {record.budget}" if record.budget
                                                                      else ""), soft_wrap=True)
    if record.not_written:
        reasons = Counter(why_kind(why) for why in record.not_written.values())
        click.echo(f"warning: {len(record.not_written):,} seeds gave no question: "
                   + "; ".join(f"{n:,} {why}" for why, n in reasons.most_common()), err=True)
    added = f"added {len(record.added):,} items (source synthetic, status draft: a person must review each)"
    if record.already:
        added += f"; {len(record.already):,} kept questions were added by this run before (not added twice)"
    out.print(added + f"; every candidate and its reasons: {report.folder / 'candidates.jsonl'}", soft_wrap=True)
    kept = [c for c in report.candidates if c.kept][:show]
    if kept:
        out.print(table(None, ("item", "type", "question", "evidence", "near misses"),
                        [(c.item_id, c.qtype, short(c.question, 60),
                          _chunks(c, lambda grade: grade > 0), _chunks(c, lambda grade: grade == 0)) for c in kept]))
    dropped = [c for c in report.candidates if not c.kept and dropped_by(c) and dropped_by(c)[0] != "sample"][:3]
    for candidate in dropped:
        name = dropped_by(candidate)[0]
        out.print(f"dropped {candidate.candidate_id}: {name}: {candidate.filters[name].reason}", soft_wrap=True)


def _chunks(candidate, graded) -> str:
    """Return the distinct chunk ids of a candidate's passages of the grades `graded` accepts, or '-'."""
    ids = dict.fromkeys(e.passage.chunk_id for e in candidate.evidence if graded(e.grade))
    return ", ".join(ids) or "-"

