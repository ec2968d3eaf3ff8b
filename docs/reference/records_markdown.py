"""The Markdown of docs/reference/formats.md: every file curate and evalrun write, and every field of
the pydantic record each is read back through, from the records' own docstrings and field
descriptions (cog runs this; `make docs` regenerates the page and a test fails while it is stale)."""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Iterator

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

import curate.records as cr
from curate.records.adjudication import AdjudicationState
from curate.records.generated import GenerateRun
from curate.records.kb import DenseIndexMeta, StagedBatch, StagedShard, TermIndexMeta
from curate.workspace import DEFAULTS, config_text
from evalrun import records as er
from evalrun.probes import folder as pf
from evalrun.probes.records import ProbeSkip, ProbeVariant, ProbeVerdict
from evalrun.review.records import Review, ReviewState

# (section, its introduction, [(path in the workspace, record, what the file is)])
FILES: list[tuple[str, str, list[tuple[str, type[BaseModel] | None, str]]]] = [
    ("KB snapshots", "One folder per snapshot; its id is a hash of its content ([snapshots](../how-to/kb.md)).", [
        ("kb/names.json", cr.KBNames, "which snapshots each KB name has had"),
        ("kb/snapshots/ID/manifest.json", cr.SnapshotManifest, "what the snapshot holds and how it was made"),
        ("kb/snapshots/ID/documents.jsonl", cr.Document, "one source document a line"),
        ("kb/snapshots/ID/chunks.jsonl", cr.Chunk, "one chunk a line: a KB of fewer than 10,000 chunks (one shard), "
         "and every snapshot written before shards"),
        ("kb/snapshots/ID/chunks/part-NNNNN.parquet", cr.Chunk, "from 10,000 chunks on: the chunks in Parquet shards "
         "of at most 50,000, in chunk order, each named in the manifest with its sha256 (columns chunk_id, doc_id, "
         "text, and record: the chunk's JSON)"),
        ("kb/index/ID/groups.json", cr.ChunkGroups, "duplicate chunks (`curate check-dups --kb`)"),
        ("kb/index/ID/lexical/meta.json", cr.LexicalIndexMeta, "a cache: the folded texts and 4-gram index"),
        ("kb/index/ID/sketch/meta.json", cr.CopySketchMeta, "a cache: what `check-dups --kb` learns of each chunk "
         "(in a snapshot in shards: kb/index/ID/shards/part-NNNNN/sketch/ and lexical/, one per shard)"),
        ("kb/index/ID/shards/PART/mining/meta.json", cr.MineSketchMeta, "a cache: what `curate generate` learns "
         "of one shard's chunks before mining (PART: part-NNNNN; a snapshot in shards)"),
        ("kb/index/ID/shards/PART/bm25-vN/meta.json", TermIndexMeta,
         "a cache: one shard's BM25 terms (PART: part-NNNNN; `curate grade` over a snapshot in shards)"),
        ("kb/index/ID/dense/KEY/meta.json", DenseIndexMeta, "a cache: chunk embeddings (`curate grade --dense`)"),
        ("cache/embeddings/KEY/keys.json", cr.EmbeddingKeys, "a cache: which text each row of vectors.npy embeds"),
        ("kb/ingesting/KEY/batches/NNNNN/summary.json", StagedBatch, "staging: one batch of a large `kb ingest` or "
         "`kb import` (KEY: a digest of the input files and settings), kept across a kill, removed once the "
         "snapshot is stored"),
        ("kb/ingesting/KEY/chunks/part-NNNNN.json", StagedShard, "staging: one shard of that snapshot, written"),
    ]),
    ("Datasets", "A dataset's draft: its items and the record of every check it has been through.", [
        ("datasets/NAME/items.jsonl", cr.EvalItem, "one evaluation item a line"),
        ("datasets/NAME/dataset.json", cr.DatasetMeta, "the dataset's KB snapshot and its checks"),
        ("datasets/NAME/leakage_accepted.json", cr.LeakageAcceptances, "leakage findings reviewed and accepted"),
        ("datasets/NAME/leakage_docs.json", cr.LeakageDocs, "documents accepted or excluded by check-leakage"),
        ("datasets/NAME/checks/leakage-vN-SNAPSHOT.json", cr.LeakageCheck,
         "a release's leakage check against another snapshot"),
        ("datasets/NAME/failures/MONTH-N.json", cr.FailureBatch, "one batch of production failures"),
        ("datasets/NAME/generated/RUN/run.json", GenerateRun, "one `curate generate` run"),
        ("datasets/NAME/generated/RUN/candidates.jsonl", cr.Candidate,
         "every question the run made, with each filter's verdict, one a line"),
        ("datasets/NAME/generated/RUN/pairs.jsonl", cr.MinedPair, "the confusable pairs mining found, one a line"),
        ("datasets/NAME/generated/RUN/probes.jsonl", cr.Probe, "the unanswerable probes mining made, one a line"),
        ("datasets/NAME/annotation.json", cr.AnnotationState, "what was pushed to Argilla"),
        ("datasets/NAME/adjudication.json", AdjudicationState, "disputed items and who settled them"),
        ("datasets/NAME/judge_suggestions.json", cr.JudgeSuggestionsPulled,
         "what annotators did with the judge's suggested grades (`annotate pull`)"),
    ]),
    ("Releases", "Immutable, read-only, loadable with Hugging Face `datasets` ([releases](../how-to/releases.md)).", [
        ("datasets/NAME/releases/vN/manifest.json", cr.ReleaseManifest, "what the release holds, hashed"),
        ("datasets/NAME/releases/vN/data/SPLIT.jsonl", None,
         "the released items of one split, one [EvalItem](#evalitem) a line"),
        ("datasets/NAME/releases/vN/README.md", None, "the dataset card: its YAML header tells `datasets` the "
         "features and which file is which split"),
    ]),
    ("Check reports", "What `--report FILE` writes.", [
        ("check-leakage --report FILE", cr.LeakageReport, "every finding with its status"),
        ("check-dups --report FILE", cr.DuplicatesReport, "clusters, rejections, duplicate chunks"),
        ("check-consistency --report FILE", cr.ConsistencyReportFile, "every question to the judge and its outcome"),
    ]),
    ("The judge's cache", "Answers kept so the same question is never asked twice.", [
        ("cache/judge/XX/KEY.json", cr.JudgeCacheEntry, "one answer of the judge"),
    ]),
    ("Run folders", "What `evalrun run` writes (`runs/NAME-vN-TIME/`, or `--out DIR`); "
     "`evalrun.records.read_run` reads it back ([runs](../how-to/run.md)).", [
        ("RUN/manifest.json", er.RunManifest, "what was run, against what, how"),
        ("RUN/traces.jsonl", er.TraceRecord, "what the system returned, one item a line; its `trace` is a "
         "[Trace](#trace)"),
        ("RUN/scores.jsonl", er.ItemScores, "every metric of one item a line"),
        ("RUN/summary.json", er.RunSummary, "the aggregates"),
        ("RUN/retrieval_grades.jsonl", cr.JudgedGrades, "the judge's grades of the retrieved chunks, one item a "
         "line (`--judge-retrieval`; `curate annotate push --suggest-from` shows them)"),
        ("RUN/judge_spend.json", er.JudgeSpend, "what the judge has cost a run with a budget so far (`--budget`, "
         "`--budget-tokens`): a resumed run starts from it"),
        ("RUN/review.json", ReviewState, "the judge review's sample and where it lives in Argilla "
         "(`evalrun review push`)"),
        ("RUN/reviews.jsonl", Review, "people's reviews of the judge, one reviewer, item and metric a line "
         "(`evalrun review pull`)"),
    ]),
    ("Probe folders", "What `evalrun probe` writes (`runs/probe-NAME-vN-TIME/`, or `--out DIR`); "
     "`evalrun.probes.folder.read_probe_run` reads it back ([probes](../how-to/probe.md)). Planted texts live only "
     "here, never in the release or the KB snapshot.", [
        ("PROBE/probe.json", pf.ProbeManifest, "what was probed, with which target, and how"),
        ("PROBE/variants.jsonl", ProbeVariant, "every variant asked, exactly as planted, one a line"),
        ("PROBE/skips.jsonl", ProbeSkip, "every variant that could not be built, and why, one a line"),
        ("PROBE/traces.jsonl", er.TraceRecord, "what the system returned, one variant a line (its `item_id` is the "
         "variant's id)"),
        ("PROBE/verdicts.jsonl", ProbeVerdict, "each variant's verdict, lexical and the judge's, one a line"),
        ("PROBE/probe_scores.jsonl", er.ItemScores, "each item's value of each probe metric (what `evalrun compare` "
         "pairs two probe runs on)"),
        ("PROBE/probe_summary.json", pf.ProbeSummary, "the metrics with n and intervals, paired to the clean "
         "variants, curves, failures"),
    ]),
]
# Records that are not files of their own but what a target returns (documented with the run).
EXTRA = [er.Trace]


def markdown() -> str:
    """Return the page's generated part: the tree of files, curate.toml, then every record."""
    out = ["## The workspace", "", "```", *_tree(), "```", "", "## curate.toml", "",
           "Written by `curate init` (the values here are its defaults); the [workspace](../how-to/workspace.md) "
           "page says where each section is used. Besides these, `[judge]` takes `timeout`, `concurrency` and "
           "`prices` ([the judge](../how-to/judge.md)), and `[gate]` holds a CI gate "
           "([compare](../how-to/compare.md#the-gate)).", "",
           "```toml", config_text({**DEFAULTS, "default_kb": "NAME", "guidelines": "guidelines"}).rstrip(),
           "```", ""]
    seen: set[type] = set()
    for section, intro, files in FILES:
        out += [f"## {section}", "", intro, "", "| file | record | what it is |", "|---|---|---|"]
        for path, model, what in files:
            out.append(f"| `{path}` | {_link(model) if model else ''} | {_cell(what)} |")
        out.append("")
        for _, model, _ in files:
            if model is not None:
                out += list(_records(model, seen))
        if section == "Run folders":
            for model in EXTRA:
                out += list(_records(model, seen))
    return "\n".join(out).rstrip() + "\n"


def documented() -> set[type]:
    """Return every record class the page documents (the files' records and what they hold)."""
    seen: set[type] = set()
    for _, _, files in FILES:
        for _, model, _ in files:
            if model is not None:
                list(_records(model, seen))
    for model in EXTRA:
        list(_records(model, seen))
    return seen


def _tree() -> list[str]:
    width = max(len(path) for _, _, files in FILES for path, _, _ in files if "/" in path and " " not in path)
    lines = ["curate.toml".ljust(width + 2) + "settings (below)"]
    for _, _, files in FILES:
        for path, model, what in files:
            if " " not in path:
                lines.append(path.ljust(width + 2) + (model.__name__ if model else what.split(":")[0].split(",")[0]))
    return lines


def _records(model: type[BaseModel], seen: set[type]) -> Iterator[str]:
    """Yield the Markdown of `model` and, after it, of every record its fields hold, each once."""
    if model in seen:
        return
    seen.add(model)
    doc = inspect.cleandoc(model.__doc__ or "")
    yield f"### {model.__name__}"
    yield ""
    yield doc
    yield ""
    version = getattr(model, "SCHEMA", None)
    if "schema_version" in model.model_fields and version is not None:
        yield f"Schema version {version}: a file written by a newer version is refused in one line, an older one is " \
              "brought up to date."
        yield ""
    extra = model.model_config.get("extra")
    if extra == "forbid":
        yield "Unknown fields are refused."
        yield ""
    yield "| field | type | default | description |"
    yield "|---|---|---|---|"
    nested: list[type[BaseModel]] = []
    for name, info in model.model_fields.items():
        nested += [t for t in _models(info.annotation) if t not in nested]
        default = f"`{version}`" if name == "schema_version" and version is not None else _default(info)
        yield f"| `{name}` | {_type(info.annotation)} | {default} | {_cell(info.description or '')} |"
    yield ""
    for inner in nested:
        yield from _records(inner, seen)


def _models(annotation) -> list[type[BaseModel]]:
    """Return the record classes inside a type annotation."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models(arg)]


def _type(annotation) -> str:
    """Return a type annotation in words a reader of JSON knows, record types linked."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is type(None):
        return "null"
    if origin is typing.Annotated:
        return _type(args[0])
    if origin is typing.Literal:
        return " or ".join(f"`{a!r}`".replace("'", '"') for a in args)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type(a) for a in args)
    if origin in (list, tuple, set, frozenset):
        inner = [a for a in args if a is not Ellipsis]
        return "list of " + (" and ".join(_type(a) for a in dict.fromkeys(inner)) if inner else "any")
    if origin is dict:
        return f"object of {_type(args[1])}" if args else "object"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _link(annotation)
    names = {str: "string", int: "integer", float: "number", bool: "boolean", dict: "object", list: "list"}
    if annotation in names:
        return names[annotation]
    if annotation is typing.Any:
        return "any"
    return f"`{getattr(annotation, '__name__', str(annotation))}`"


def _default(info) -> str:
    if info.default_factory is not None:
        factory = info.default_factory
        if factory is cr.now:
            return "now (UTC)"
        try:
            value = factory()
        except TypeError:
            return "computed"
        if isinstance(value, BaseModel):
            return "all defaults"
        return f"`{_json(value)}`"
    if info.default is PydanticUndefined:
        return "required"
    return f"`{_json(info.default)}`"


def _json(value) -> str:
    import json
    return json.dumps(value, ensure_ascii=False)


def _link(model: type[BaseModel]) -> str:
    return f"[{model.__name__}](#{model.__name__.lower()})"


def _cell(text: str) -> str:
    """Return text fit for one table cell."""
    return " ".join(text.split()).replace("|", "\\|")
