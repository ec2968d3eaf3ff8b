"""What identifies and describes a snapshot's content: the sha256 of its records in order (its id), and how its
chunks are scoped. Both can be taken a batch of records at a time and combined (`hashed_lines`, `ScopeTally`),
so a snapshot ingested by many workers gets the id and the counts one process would give it."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from curate.fileio import dumps_json
from curate.records import Chunk, Document, ScopeCount, ScopeCounts, ScopeSettings
from curate.scope import ScopeIndex, version_order


def content_sha256(documents: Sequence[Document], chunks: Sequence[Chunk]) -> str:
    """Return the sha256 that identifies a snapshot: documents and chunks, in order."""
    digest = hashlib.sha256()
    digest.update(hashed_lines(documents))
    digest.update(hashed_lines(chunks))
    return digest.hexdigest()


def hashed_lines(records: Iterable[Chunk | Document]) -> bytes:
    """Return the bytes records add to a snapshot's sha256: a line each, `D` or `C` and its canonical JSON (a
    snapshot's sha256 is that of its documents' lines followed by its chunks' lines).

    >>> from curate.records import Chunk
    >>> hashed_lines([Chunk(chunk_id="a#0", doc_id="a", text="t", text_sha256="0")])
    b'C{"chunk_id":"a#0","doc_id":"a","end":null,"metadata":{},"start":null,"text":"t","text_sha256":"0"}\\n'
    """
    return b"".join((b"D" if isinstance(r, Document) else b"C") + dumps_json(_hashed(r)).encode("utf-8") + b"\n"
                    for r in records)


def _hashed(record: Chunk | Document) -> dict:
    """Return the fields of a chunk or document that identify a snapshot: a record without scope hashes
    as it did before scope existed, so unscoped snapshots keep their ids."""
    data = record.model_dump(mode="json")
    if data.get("scope") is None:
        data.pop("scope", None)
    return data


@dataclass
class ScopeTally:
    """What a batch of chunks adds to a snapshot's scope counts; tallies of batches add up (`+`)."""

    chunks: int = 0
    scoped: int = 0
    restricted: int = 0   # scoped chunks with groups
    groups: Counter = field(default_factory=Counter)
    versions: Counter = field(default_factory=Counter)
    dated: int = 0
    supersedes: set[str] = field(default_factory=set)   # the ids the chunks supersede

    @classmethod
    def of(cls, chunks: Sequence[Chunk]) -> ScopeTally:
        """Return the tally of `chunks`."""
        scoped = [c.scope for c in chunks if c.scope is not None and not c.scope.is_empty()]
        return cls(chunks=len(chunks), scoped=len(scoped), restricted=sum(s.groups is not None for s in scoped),
                   groups=Counter(g for s in scoped for g in s.groups or ()),
                   versions=Counter(s.version for s in scoped if s.version is not None),
                   dated=sum(s.valid_from is not None or s.valid_to is not None for s in scoped),
                   supersedes={target for s in scoped for target in s.supersedes})

    def __add__(self, other: ScopeTally) -> ScopeTally:
        return ScopeTally(self.chunks + other.chunks, self.scoped + other.scoped, self.restricted + other.restricted,
                          self.groups + other.groups, self.versions + other.versions, self.dated + other.dated,
                          self.supersedes | other.supersedes)

    def counts(self, settings: ScopeSettings | None, superseded: int, unknown_superseded: list[str],
               ) -> ScopeCounts | None:
        """Return the snapshot's scope counts (None when no chunk has a scope), given how many of its chunks
        are superseded and which superseded ids it does not hold."""
        if not self.scoped:
            return None
        settings = settings or ScopeSettings()
        everyone = self.chunks - self.restricted
        names = [g for g in settings.groups or () if g not in self.groups] + sorted(self.groups)
        order = version_order(settings)
        return ScopeCounts(
            everyone=everyone,
            groups=[ScopeCount(name=g, chunks=everyone + self.groups[g])
                    for g in sorted(names, key=_declared(settings))],
            versions=[ScopeCount(name=v, chunks=self.versions[v]) for v in sorted(self.versions, key=order.key)],
            unversioned=self.chunks - sum(self.versions.values()), dated=self.dated,
            superseded=superseded, unknown_superseded=unknown_superseded)


def superseded_in(chunk_ids: Sequence[str], doc_ids: Sequence[str], supersedes: set[str]) -> tuple[int, set[str]]:
    """Return how many of the chunks `chunk_ids` (of the documents `doc_ids`) are superseded (their id or their
    document's is in `supersedes`) and which ids of `supersedes` they hold."""
    if not supersedes:
        return 0, set()
    held = (set(chunk_ids) | set(doc_ids)) & supersedes
    return sum(c in supersedes or d in supersedes for c, d in zip(chunk_ids, doc_ids)), held


def scope_counts(chunks: Sequence[Chunk], settings: ScopeSettings | None = None) -> ScopeCounts | None:
    """Return how many chunks each access group may see and each version holds (None when no chunk has
    a scope: an unscoped snapshot's manifest stays as it was).

    >>> from curate.records import Scope
    >>> def chunk(cid, doc, **scope):
    ...     return Chunk(chunk_id=cid, doc_id=doc, text="t", text_sha256="0", scope=Scope(**scope) if scope else None)
    >>> counts = scope_counts([chunk("p25#0", "p25", version="2025"),
    ...                        chunk("p26#0", "p26", version="2026", supersedes=["p25", "p24"]),
    ...                        chunk("pay#0", "pay", groups=["hr"]), chunk("faq#0", "faq")])
    >>> counts.everyone, [(g.name, g.chunks) for g in counts.groups], [(v.name, v.chunks) for v in counts.versions]
    (3, [('hr', 4)], [('2025', 1), ('2026', 1)])
    >>> counts.unversioned, counts.superseded, counts.unknown_superseded
    (2, 1, ['p24'])
    """
    tally = ScopeTally.of(chunks)
    if not tally.scoped:
        return None
    superseded, _ = superseded_in([c.chunk_id for c in chunks], [c.doc_id for c in chunks], tally.supersedes)
    order = version_order(settings or ScopeSettings())
    unknown = ScopeIndex(chunks, order).unknown_superseded if tally.supersedes else []
    return tally.counts(settings, superseded, unknown)


def _declared(settings: ScopeSettings):
    """Return a sort key: declared groups in their order, then the others by name."""
    position = {g: n for n, g in enumerate(settings.groups or ())}
    return lambda group: (position.get(group, len(position)), group)
