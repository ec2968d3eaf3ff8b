"""Hugging Face `datasets`: the features of an item row, the dataset card whose YAML header lets
`datasets.load_dataset(FOLDER)` load a release, and a release written as Parquet.

Every split file is read with the same explicit features, so a split whose rows happen to
hold only empty lists still loads beside the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from curate.errors import InputError
from curate.fileio import dumps_json, loads_json
from curate.records import EvalItem

S, I, F, B = "string", "int64", "float64", "bool"
# (name, type): a type is a dtype, ("list", type) or ("struct", [(name, type), ...]).
EVIDENCE = [("evidence_id", S), ("doc_id", S), ("start", I), ("end", I), ("text", S), ("grade", I),
            ("chunk_ids", ("list", S)), ("kb_snapshot", S), ("located_by", S), ("match_score", F),
            ("partial", B), ("any_of", S), ("copies", ("list", S))]
ITEM_FEATURES = [
    ("schema_version", I), ("id", S), ("question", S), ("reference_answer", S), ("answers", ("list", S)),
    ("key_points", ("list", ("struct", [("text", S), ("evidence_ids", ("list", S))]))),
    ("evidence", ("list", ("struct", EVIDENCE))),
    ("answerable", B), ("language", S), ("difficulty", S),
    ("difficulty_features", S),  # canonical JSON: its keys vary with the grader
    ("qtype", S), ("split", S), ("source", S), ("status", S),
    ("status_history", ("list", ("struct", [("status", S), ("reason", S), ("at", S), ("by", S)]))),
    ("duplicate_of", S),
    ("kb_snapshot", S), ("asker_groups", ("list", S)), ("asker_role", S), ("as_of", S),
    ("guideline_version", S), ("tags", ("list", S)),
    ("provenance", ("struct", [("file", S), ("line", I), ("original_id", S), ("format", S), ("extra", S)])),
    ("production", ("struct", [("answer", S), ("retrieved", ("list", S)), ("failed_by", ("list", S)),
                               ("hints", ("list", S)), ("run_id", S),
                               ("asked", ("list", ("struct", [("month", S), ("batch", S), ("count", I),
                                                              ("users", I)])))])),
    ("generation", ("struct", [("method", S), ("run", S), ("candidate_id", S), ("template", S), ("model", S),
                               ("prompt_version", S), ("seed_chunks", ("list", S)), ("pair_id", S),
                               ("probe_id", S), ("near_miss", ("list", S)),
                               ("features", S)])),  # canonical JSON, as difficulty_features
    ("created_at", S), ("updated_at", S),
]


def release_row(item: EvalItem) -> dict:
    """Return the row a release stores for `item` (difficulty_features and generation.features as
    canonical JSON)."""
    row = item.model_dump(mode="json")
    row["difficulty_features"] = dumps_json(row["difficulty_features"])
    if row.get("generation") is not None:
        row["generation"] = {**row["generation"], "features": dumps_json(row["generation"]["features"])}
    return row


def item_from_row(row: dict, *, file: str | Path | None = None, line: int | None = None) -> EvalItem:
    """Return the item a release row holds (a bad row raises an error naming its file and line)."""
    where = {"file": None if file is None else str(file), "line": line}
    features = row.get("difficulty_features")
    if isinstance(features, str):
        try:
            row = {**row, "difficulty_features": loads_json(features)}
        except ValueError:
            raise InputError("not valid JSON", field="difficulty_features", **where) from None
    generation = row.get("generation")
    if isinstance(generation, dict) and isinstance(generation.get("features"), str):
        try:
            row = {**row, "generation": {**generation, "features": loads_json(generation["features"])}}
        except ValueError:
            raise InputError("not valid JSON", field="generation.features", **where) from None
    return EvalItem.parse(row, file=file, line=line)


def _yaml(features: Sequence[tuple[str, object]], indent: int) -> list[str]:
    pad = " " * indent
    lines = []
    for name, kind in features:
        lines.append(f"{pad}- name: {name}")
        lines += _type_lines(kind, indent + 2)
    return lines


def _type_lines(kind: object, indent: int) -> list[str]:
    pad = " " * indent
    if isinstance(kind, str):
        return [f"{pad}dtype: {kind}"]
    tag, inner = kind
    if tag == "struct":
        return [f"{pad}struct:"] + _yaml(inner, indent)
    if isinstance(inner, str):
        return [f"{pad}list: {inner}"]
    if inner[0] == "struct":
        return [f"{pad}list:"] + _yaml(inner[1], indent)
    raise ValueError(f"unsupported feature type {kind!r}")


def card(*, name: str, version: str, sha256: str, sha256_of: str, message: str, items: int,
         kb_snapshot: str | None, splits: Sequence[str], extension: str = "jsonl") -> str:
    """Return README.md for a release: YAML config and features, then a short description
    (`sha256`: a hash that tells this content apart, of what `sha256_of` says; `extension`: the data
    files' format, jsonl in a release, parquet in an export)."""
    # `datasets` caches a YAML-configured folder by config name and relative paths only, so
    # two releases under one config name would be served each other's rows: the name carries
    # the dataset, version and a content hash.
    config = f"{name}-{version}-{sha256[:12]}"
    lines = ["---", "configs:", f"  - config_name: {config}", "    default: true", "    data_files:"]
    for split in splits:
        lines += [f"      - split: {split}", f"        path: data/{split}.{extension}"]
    lines += ["dataset_info:", f"  config_name: {config}", "  features:"] + _yaml(ITEM_FEATURES, 2) + ["---", ""]
    lines += [f"# {name} {version}", "", message, "",
              f"{items} items; KB snapshot {kb_snapshot}; sha256 of the {sha256_of} {sha256}.",
              "Load with `datasets.load_dataset(\"<this folder>\")`. `difficulty_features` is canonical JSON.",
              "manifest.json holds the counts, the checks passed and the changelog.", ""]
    return "\n".join(lines)


def card_data_files(text: str) -> list[tuple[str, str]]:
    """Return the (split, path) pairs the YAML header of a card written by `card` names, in order
    (whatever else the header holds is not read: a card laid out otherwise yields other pairs).

    >>> card_data_files(card(name="faq", version="v1", sha256="ab", sha256_of="data files", message="m",
    ...                      items=2, kb_snapshot=None, splits=["dev", "test"]))
    [('dev', 'data/dev.jsonl'), ('test', 'data/test.jsonl')]
    """
    lines = text.split("\n")
    header = lines[1:lines.index("---", 1)] if lines[:1] == ["---"] and "---" in lines[1:] else []
    pairs, split = [], None
    for line in header:
        key, _, value = line.strip().removeprefix("- ").partition(":")
        value = value.strip().strip("'\"")
        if key == "split":
            split = value
        elif key == "path":
            pairs.append((split or "", value))
            split = None
    return pairs


def features():
    """Return the `datasets.Features` of an item row (the same types the card declares)."""
    import datasets

    def convert(kind: object):
        if isinstance(kind, str):
            return datasets.Value(kind)
        tag, inner = kind
        if tag == "struct":
            return {name: convert(sub) for name, sub in inner}
        return [convert(inner)] if not isinstance(inner, str) else datasets.Sequence(datasets.Value(inner))

    return datasets.Features({name: convert(kind) for name, kind in ITEM_FEATURES})


def write_parquet(out: Path, by_split: dict[str, Sequence[EvalItem]], *, name: str, version: str,
                  content_sha256: str, message: str, kb_snapshot: str | None) -> dict[str, int]:
    """Write `data/<split>.parquet` and a README.md card into the folder `out` (which must exist and be
    empty): a Hugging Face dataset of the items that `datasets.load_dataset(out)` loads."""
    import datasets
    datasets.disable_progress_bars()  # our own bars only
    types = features()
    (out / "data").mkdir()
    written = {}
    for split, items in by_split.items():
        table = datasets.Dataset.from_list([release_row(i) for i in items], features=types)
        table.to_parquet(str(out / "data" / f"{split}.parquet"))
        written[split] = len(items)
    (out / "README.md").write_text(card(name=name, version=version, sha256=content_sha256, sha256_of="content",
                                        message=message, items=sum(written.values()), kb_snapshot=kb_snapshot,
                                        splits=list(written), extension="parquet"), encoding="utf-8")
    return written
