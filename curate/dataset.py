"""Draft datasets: datasets/NAME/items.jsonl and dataset.json, always rewritten atomically."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from .errors import InputError, NotFound
from .fileio import atomic_write_bytes, atomic_write_json, jsonl_bytes, sha256_bytes
from .schema import DatasetMeta, EvalItem
from .workspace import Workspace

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def check_name(name: str) -> str:
    """Return `name` if it can name a dataset, else raise InputError."""
    if not _NAME.fullmatch(name or ""):
        raise InputError(f"dataset name {name!r} must be letters, digits, '_', '.' or '-'", field="dataset")
    return name


def parse_ref(ref: str) -> tuple[str, str | None]:
    """Return (name, version or None) of 'NAME' or 'NAME@vN'.

    >>> parse_ref("faq@v2"), parse_ref("faq")
    (('faq', 'v2'), ('faq', None))
    """
    name, _, version = ref.partition("@")
    check_name(name)
    if version and not re.fullmatch(r"v[1-9][0-9]*", version):
        raise InputError(f"version {version!r} must look like v1, v2, ...", field="dataset")
    return name, version or None


class DatasetStore:
    """The datasets of a workspace."""

    def __init__(self, workspace: Workspace):
        self.workspace = workspace

    def folder(self, name: str) -> Path:
        return self.workspace.datasets_dir / check_name(name)

    def exists(self, name: str) -> bool:
        return (self.folder(name) / "dataset.json").exists()

    def names(self) -> list[str]:
        """Return the names of every dataset."""
        root = self.workspace.datasets_dir
        return sorted(p.name for p in root.iterdir() if (p / "dataset.json").exists()) if root.exists() else []

    def meta(self, name: str) -> DatasetMeta:
        """Return a dataset's own record."""
        path = self.folder(name) / "dataset.json"
        if not path.exists():
            known = ", ".join(self.names()) or "none yet"
            raise NotFound(f"no dataset '{name}' (datasets: {known})")
        return DatasetMeta.model_validate_json(path.read_text(encoding="utf-8"))

    def items(self, name: str) -> list[EvalItem]:
        """Return the draft items of a dataset, in order."""
        meta = self.meta(name)
        path = self.folder(name) / "items.jsonl"
        if not path.exists():
            return []
        data = path.read_bytes()
        items = []
        for line_number, line in enumerate(data.decode("utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                items.append(EvalItem.model_validate_json(line))
            except ValidationError as exc:
                error = exc.errors()[0]
                raise InputError(error["msg"], file=str(path), line=line_number,
                                 field=".".join(map(str, error["loc"]))) from None
        if meta.items_sha256 is not None and meta.items_sha256 != sha256_bytes(data):
            # A save was interrupted between the items and this record: the items are whole
            # (written atomically) and are the truth; bring the record in line with them.
            snapshots = {i.kb_snapshot for i in items if i.kb_snapshot}
            if len(snapshots) == 1:
                meta.kb_snapshot = snapshots.pop()
            meta.items_sha256 = sha256_bytes(data)
            atomic_write_json(self.folder(name) / "dataset.json", meta.model_dump(mode="json"))
        return items

    def save(self, meta: DatasetMeta, items: Sequence[EvalItem]) -> None:
        """Write a dataset's items then its record, each atomically."""
        folder = self.folder(meta.name)
        data = jsonl_bytes(i.model_dump(mode="json") for i in items)
        atomic_write_bytes(folder / "items.jsonl", data)
        meta.items_sha256 = sha256_bytes(data)
        atomic_write_json(folder / "dataset.json", meta.model_dump(mode="json"))

    def load(self, name: str) -> tuple[DatasetMeta, list[EvalItem]]:
        """Return a dataset's record and items (the items first: reading them may repair the record)."""
        items = self.items(name)
        return self.meta(name), items

    def load_or_new(self, name: str) -> tuple[DatasetMeta, list[EvalItem]]:
        """Return a dataset's record and items, or a new empty one."""
        if self.exists(name):
            return self.load(name)
        return DatasetMeta(name=check_name(name)), []


def read_items_file(path: Path) -> list[EvalItem]:
    """Return the items of a release's data file."""
    from .hf_card import item_from_row
    items = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                items.append(item_from_row(json.loads(line)))
    return items


def items_digest(items) -> str:
    """Return a sha256 of the items' content, in id order: a check stays current while it matches."""
    import hashlib
    from .fileio import dumps_json
    digest = hashlib.sha256()
    for item in sorted(items, key=lambda i: i.id):
        digest.update(dumps_json(item.content()).encode("utf-8") + b"\n")
    return digest.hexdigest()
