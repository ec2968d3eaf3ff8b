"""The dataset card of a release: the YAML header that lets Hugging Face `datasets` load it.

Every split file is read with the same explicit features, so a split whose rows happen to
hold only empty lists still loads beside the others.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from .fileio import dumps_json
from .schema import EvalItem

S, I, F, B = "string", "int64", "float64", "bool"
# (name, type): a type is a dtype, ("list", type) or ("struct", [(name, type), ...]).
EVIDENCE = [("evidence_id", S), ("doc_id", S), ("start", I), ("end", I), ("text", S), ("grade", I),
            ("chunk_ids", ("list", S)), ("kb_snapshot", S), ("located_by", S), ("match_score", F),
            ("partial", B)]
ITEM_FEATURES = [
    ("schema_version", I), ("id", S), ("question", S), ("reference_answer", S),
    ("key_points", ("list", ("struct", [("text", S), ("evidence_ids", ("list", S))]))),
    ("evidence", ("list", ("struct", EVIDENCE))),
    ("answerable", B), ("language", S), ("difficulty", S),
    ("difficulty_features", S),  # canonical JSON: its keys vary with the grader
    ("qtype", S), ("split", S), ("source", S), ("status", S),
    ("status_history", ("list", ("struct", [("status", S), ("reason", S), ("at", S), ("by", S)]))),
    ("duplicate_of", S),
    ("kb_snapshot", S), ("guideline_version", S), ("tags", ("list", S)),
    ("provenance", ("struct", [("file", S), ("line", I), ("original_id", S), ("format", S), ("extra", S)])),
    ("created_at", S), ("updated_at", S),
]


def release_row(item: EvalItem) -> dict:
    """Return the row a release stores for `item` (difficulty_features as canonical JSON)."""
    row = item.model_dump(mode="json")
    row["difficulty_features"] = dumps_json(row["difficulty_features"])
    return row


def item_from_row(row: dict) -> EvalItem:
    """Return the item a release row holds."""
    if isinstance(row.get("difficulty_features"), str):
        row = {**row, "difficulty_features": json.loads(row["difficulty_features"])}
    return EvalItem.model_validate(row)


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


def card(*, name: str, version: str, content_sha256: str, message: str, items: int, kb_snapshot: str | None,
         splits: Sequence[str]) -> str:
    """Return README.md for a release: YAML config and features, then a short description."""
    # `datasets` caches a YAML-configured folder by config name and relative paths only, so
    # two releases under one config name would be served each other's rows: the name carries
    # the dataset, version and content hash.
    config = f"{name}-{version}-{content_sha256[:12]}"
    lines = ["---", "configs:", f"  - config_name: {config}", "    default: true", "    data_files:"]
    for split in splits:
        lines += [f"      - split: {split}", f"        path: data/{split}.jsonl"]
    lines += ["dataset_info:", f"  config_name: {config}", "  features:"] + _yaml(ITEM_FEATURES, 2) + ["---", ""]
    lines += [f"# {name} {version}", "", message, "",
              f"{items} items; KB snapshot {kb_snapshot}; content sha256 {content_sha256}.",
              "Load with `datasets.load_dataset(\"<this folder>\")`. `difficulty_features` is canonical JSON.",
              "manifest.json holds the counts, the checks passed and the changelog.", ""]
    return "\n".join(lines)
