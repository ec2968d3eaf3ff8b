"""Draft datasets: datasets/NAME/items.jsonl and dataset.json, always rewritten atomically."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path

from curate.errors import InputError, NotFound
from curate.fileio import atomic_write_bytes, dumps_json, jsonl_bytes, read_text, sha256_bytes
from curate.locks import writing
from curate.records import DatasetMeta, EvalItem
from curate.records.checks import CheckRecord
from curate.records.base import read_jsonl
from curate.workspace import Workspace

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
MAX_NAME = 100


def check_name(name: str) -> str:
    """Return `name` if it can name a dataset (1-100 letters, digits, '_', '.' or '-'), else raise."""
    if not _NAME.fullmatch(name or ""):
        raise InputError(f"dataset name {name!r} must be letters, digits, '_', '.' or '-'", field="dataset")
    if len(name) > MAX_NAME:
        raise InputError(f"a dataset name is at most {MAX_NAME} characters, this one has {len(name)}",
                         field="dataset")
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
        """Return the folder of dataset `name` (which need not exist)."""
        return self.workspace.datasets_dir / check_name(name)

    def writing(self, name: str):
        """Return the context that holds dataset `name`'s write lock (see `curate.locks`)."""
        return writing(self.folder(name), f"dataset '{name}'")

    def exists(self, name: str) -> bool:
        """Return whether dataset `name` exists."""
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
        return DatasetMeta.read(path)

    def items(self, name: str) -> list[EvalItem]:
        """Return the draft items of a dataset, in order."""
        meta = self.meta(name)
        path = self.folder(name) / "items.jsonl"
        if not path.exists():
            return []
        text = read_text(path)
        data = text.encode("utf-8")
        items = list(read_jsonl(EvalItem, path, text))
        if meta.items_sha256 is not None and meta.items_sha256 != sha256_bytes(data):
            # A save was interrupted between the items and this record: the items are whole
            # (written atomically) and are the truth; bring the record in line with them.
            snapshots = {i.kb_snapshot for i in items if i.kb_snapshot}
            if len(snapshots) == 1:
                meta.kb_snapshot = snapshots.pop()
            meta.items_sha256 = sha256_bytes(data)
            meta.write(self.folder(name) / "dataset.json")
        return items

    def save(self, meta: DatasetMeta, items: Sequence[EvalItem]) -> None:
        """Write a dataset's items then its record, each atomically."""
        folder = self.folder(meta.name)
        data = jsonl_bytes(i.model_dump(mode="json") for i in items)
        atomic_write_bytes(folder / "items.jsonl", data)
        meta.items_sha256 = sha256_bytes(data)
        meta.write(folder / "dataset.json")

    def load(self, name: str) -> tuple[DatasetMeta, list[EvalItem]]:
        """Return a dataset's record and items (the items first: reading them may repair the record)."""
        items = self.items(name)
        return self.meta(name), items

    def load_or_new(self, name: str) -> tuple[DatasetMeta, list[EvalItem]]:
        """Return a dataset's record and items, or a new empty one."""
        if self.exists(name):
            return self.load(name)
        return DatasetMeta(name=check_name(name)), []


def items_digest(items: Iterable[EvalItem], ignore: Collection[str] = ()) -> str:
    """Return a sha256 of the items' content, in id order, leaving out the fields in `ignore` (those
    a check does not read, its record's IGNORES): a check stays current while it matches."""
    digest = hashlib.sha256()
    for item in sorted(items, key=lambda i: i.id):
        content = {k: v for k, v in item.content().items() if k not in ignore}
        digest.update(dumps_json(content).encode("utf-8") + b"\n")
    return digest.hexdigest()


def check_current(record: CheckRecord, items: Iterable[EvalItem]) -> bool | None:
    """Return whether a check record saw these items (as far as it reads them), None if it kept no digest."""
    if record.items_sha256 is None:
        return None
    items = list(items)
    # a record written before checks left out the fields they do not read holds the whole digest
    return record.items_sha256 in (items_digest(items, ignore=type(record).IGNORES), items_digest(items))
