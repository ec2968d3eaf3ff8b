"""`curate init`, `curate import`, `curate remap`: a workspace, items into a draft dataset, evidence
carried onto another snapshot."""

from __future__ import annotations

from pathlib import Path

import click

from curate.cli.base import EXIT_FINDINGS, asker_defaults, asker_options, workspace_of
from curate.cli.display import console, report_skipped, short, table
from curate.dataset import import_items
from curate.dataset.build import EVIDENCE_MODES
from curate.dataset.importer import FORMATS
from curate.dataset import remap as run_remap
from curate.dataset.remap import side_by_side
from curate.records import SOURCES
from curate.workspace import init_workspace


@click.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path), default=".")
@click.option("--kb", "default_kb", help="Default KB name or snapshot id.")
@click.option("--embedding-model", help="sentence-transformers model name or local folder.")
@click.option("--judge-base-url", help="Base URL of an OpenAI-compatible judge endpoint.")
@click.option("--judge-model", help="Judge model name.")
@click.option("--judge-api-key-env", help="NAME of the environment variable holding the judge key.")
@click.option("--guidelines", help="Folder of relevance guidelines (its hash is the guideline version).")
def init(directory: Path, **settings: str) -> None:
    """Create a workspace (curate.toml, kb/, datasets/) in DIRECTORY and print the steps to a first release."""
    workspace = init_workspace(directory, **settings)
    click.echo(f"created workspace {workspace.root} ({workspace.config_path.name})")
    click.echo("next, in this order (docs/tutorials/first-release.md goes through them):")
    for step in next_steps(directory, settings.get("default_kb")):
        click.echo(f"  {step}")


def next_steps(directory: Path, kb: str | None) -> list[str]:
    """Return the commands that take a new workspace to a first release, in an order that works.

    >>> next_steps(Path("hr-eval"), "hr")[:2]
    ['cd hr-eval', 'curate kb ingest DOCS_FOLDER --name hr     # your documents: .md, .txt, .jsonl']
    """
    name = kb or "KB"
    dataset = kb or "DATASET"
    steps = [] if directory.resolve() == Path.cwd().resolve() else [f"cd {directory}"]
    return steps + [
        f"curate kb ingest DOCS_FOLDER --name {name}     # your documents: .md, .txt, .jsonl",
        f"curate import QUESTIONS.jsonl --dataset {dataset} --source human",
        f"curate check-dups --dataset {dataset} --kb",
        f"curate grade --dataset {dataset}",
        f"curate split --dataset {dataset} --seed 1",
        f"curate check-leakage --dataset {dataset}",
        f"curate release --dataset {dataset} -m \"First release\"",
        f"evalrun run --dataset {dataset}@v1 --target MODULE:FUNCTION --out runs/first",
    ]


@click.command("import")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--dataset", required=True, help="Dataset to add the items to (created if new).")
@click.option("--source", required=True, type=click.Choice(SOURCES), help="Where the questions come from.")
@click.option("--kb", help="KB name or snapshot (JSONL/CSV); name of the KB to create (beir/squad).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True,
              help="auto: JSONL or CSV by extension; beir: a BEIR folder; squad: a SQuAD/CMRC2018 file.")
@click.option("--map", "mapping", multiple=True, metavar="OLD=NEW", help="Read input field OLD as NEW.")
@click.option("--encoding", default="utf-8", show_default=True)
@click.option("--skip-invalid", is_flag=True, help="Import the valid records and list every skipped one.")
@click.option("--min-score", type=click.FloatRange(0, 100), default=90.0, show_default=True,
              help="Lowest fuzzy score (0-100) at which quoted evidence counts as found.")
@click.option("--chunker", type=click.Choice(["structure", "fixed"]),
              help="squad only: chunk paragraphs instead of one chunk per paragraph.")
@click.option("--chunk-size", type=click.IntRange(min=1), help="squad only: chunk size for --chunker.")
@click.option("--evidence-mode", type=click.Choice(EVIDENCE_MODES), default="all", show_default=True,
              help="all: each passage of a record is needed; any: they are alternatives for one fact and "
              "finding any one counts (a record's own evidence_mode field wins).")
@asker_options
@click.pass_context
def import_(ctx: click.Context, path: Path, dataset: str, source: str, kb: str | None, fmt: str,
            mapping: tuple[str, ...], encoding: str, skip_invalid: bool, min_score: float,
            chunker: str | None, chunk_size: int | None, evidence_mode: str, asker_role: str | None,
            asker_groups: str | None, as_of: str | None) -> None:
    """Import questions with their answers, key points and evidence into a draft dataset."""
    report = import_items(workspace_of(ctx), path, dataset=dataset, source=source, kb=kb, format=fmt,
                          mapping=mapping, encoding=encoding, skip_invalid=skip_invalid, min_score=min_score,
                          chunker=chunker, chunk_size=chunk_size, evidence_mode=evidence_mode,
                          asker=asker_defaults(asker_role, asker_groups, as_of))
    report_skipped(report.skipped)
    located = ", ".join(f"{n} {how}" for how, n in sorted(report.located_by.items())) or "none"
    records = f" ({report.records} of them curate's own item records, read whole)" if report.records else ""
    click.echo(f"{dataset}: imported {len(report.imported)} items{records} against KB snapshot {report.kb_snapshot}; "
               f"evidence located: {located}")
    for item_id, before, after in report.regrouped:
        click.echo(f"warning: item {item_id}: {before} required evidence groups in its record, {after} here (chunk "
                   f"copies known in one workspace only, or another chunking: `curate check-dups --kb` finds copies)",
                   err=True)


@click.command()
@click.option("--dataset", required=True)
@click.option("--kb", required=True, help="Target KB snapshot (id, id prefix, or KB name for its newest).")
@click.option("--min-score", type=click.FloatRange(0, 100), default=90.0, show_default=True,
              help="Lowest fuzzy score accepted.")
@click.option("--dry-run", is_flag=True, help="Report without writing.")
@click.pass_context
def remap(ctx: click.Context, dataset: str, kb: str, min_score: float, dry_run: bool) -> None:
    """Map every evidence span onto another snapshot; report what cannot be mapped, what now reads
    another fact (other numbers, dates, codes) and items whose required evidence groups changed (exit 1)."""
    report = run_remap(workspace_of(ctx), dataset=dataset, kb=kb, min_score=min_score, dry_run=dry_run)
    mapped = ", ".join(f"{n} by {how}" for how, n in sorted(report.mapped.items())) or "none"
    click.echo(f"{dataset}: {report.source_snapshot} -> {report.target_snapshot}: mapped {mapped}; "
               f"changed {len(report.changed)}; unmapped {len(report.unmapped)}; "
               f"required groups changed in {len(report.groups_changed)} items"
               + ("" if report.written else " (dry run, nothing written)"))
    if report.changed:
        rows = []
        for c in report.changed:
            old, new = side_by_side(c.old_text, c.new_text)
            rows.append((c.item_id, c.evidence_id, old, new, f"{c.doc_id} [{c.start}:{c.end}]", c.differs))
        console().print(table("evidence that now reads another fact (not re-bound; items set to needs_adjudication)",
                              ("item", "evidence", "it read", "the KB now reads", "where", "differs"), rows))
    if report.unmapped:
        rows = [(u.item_id, u.evidence_id, u.doc_id, short(u.text, 50), u.why) for u in report.unmapped]
        console().print(table("evidence not mapped (items set to needs_evidence)",
                              ("item", "evidence", "document", "text", "why"), rows))
    if report.groups_changed:
        rows = [(g.item_id, str(g.before), str(g.after)) for g in report.groups_changed]
        console().print(table("items whose required evidence groups changed", ("item", "before", "after"), rows))
    if report.changed or report.unmapped or report.groups_changed:
        ctx.exit(EXIT_FINDINGS)
