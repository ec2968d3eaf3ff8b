"""Unanswerable probes mined from a KB without a model (`Probe`): a code, a year or a name shaped like
the KB's that no chunk contains. A question about it has no answer in the KB; a system that answers
it from the nearest real one (LG-4034 from LG-4033, the 2027 rule from the 2026 one) invents.

- code: each family of codes (same letters, separator and number of digits, two codes at least) gets
  the code one past its largest, else the first free code one digit away from one of its codes;
- year: each year of a mined date pair's series gets the year after the latest, when no chunk names it;
- name: a document title that reads as a name (2 to 8 CJK characters, no digit, or up to three
  capitalised words) gets one character changed to one of another title's, when no chunk holds it.

Absent means: no chunk's text holds it as a token, compared case- and width-folded (LG-4034 is not in
"LG-40345"); a name is absent when no chunk and no title holds it at all.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Sequence

from curate.generate.mine import CODE, Mined, family
from curate.generate.passages import ChunkPassage, chunk_passages, passage
from curate.records import Chunk
from curate.records.generated import Passage, Probe
from curate.text.normalize import canonical, language_of

_CJK_NAME = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]{2,8}")
_LATIN_NAME = re.compile(r"[A-Z][a-z]+(?: [A-Z][a-z]+){0,2}")
_YEAR = re.compile(r"(?<!\d)(?:1[89]|20)\d\d(?!\d)")


def probe_id(token: str) -> str:
    """Return the stable id of a probe: 'u-' and 10 hex digits of its token."""
    return "u-" + hashlib.sha256(token.encode("utf-8")).hexdigest()[:10]


class _Corpus:
    """Every chunk's text, canonical and joined, to ask whether a token occurs anywhere."""

    def __init__(self, chunks: Sequence[Chunk]):
        self.text = "\n".join(canonical(c.text) for c in chunks)
        self.titles = "\n".join(canonical(str(c.metadata.get("title") or "")) for c in chunks)

    def holds_token(self, token: str) -> bool:
        pattern = rf"(?<![a-z0-9_-]){re.escape(canonical(token))}(?![a-z0-9_]|[-.]\d)"   # canonical: lower case
        return re.search(pattern, self.text) is not None

    def holds_text(self, text: str) -> bool:
        return canonical(text) in self.text or canonical(text) in self.titles


def code_probes(chunks: Sequence[Chunk], corpus: _Corpus, passages: Sequence[ChunkPassage]) -> list[Probe]:
    """Return one probe per family of two codes or more (module docstring)."""
    where: dict[str, ChunkPassage] = {}
    for found in passages:
        for match in CODE.finditer(chunks[found.chunk].text[found.start:found.end]):
            where.setdefault(match.group(0), found)
    families: dict[tuple[str, str, int], list[str]] = defaultdict(list)
    for code in sorted(where):
        families[family(code)].append(code)
    probes = []
    for (letters, separator, width), codes in sorted(families.items()):
        if len(codes) < 2:
            continue
        made = _free_code(letters, separator, width, codes, corpus)
        if made is None:
            continue
        token, near = made
        passages = {}
        for code in near:    # one passage naming two of the near codes is one near miss
            passages.setdefault((where[code].chunk, where[code].start), passage(chunks, where[code]))
        probes.append(Probe(probe_id=probe_id(token), kind="code", token=token, looks_like=near,
                            near=list(passages.values())))
    return probes


def _free_code(letters: str, separator: str, width: int, codes: list[str],
               corpus: _Corpus) -> tuple[str, list[str]] | None:
    """Return (a code of the family no chunk holds, the real codes one digit away), or None."""
    numbers = sorted(int(CODE.fullmatch(code).group(3)) for code in codes)
    tried = [numbers[-1] + 1] + [n + step for n in numbers for step in (1, -1, 2, -2)]
    for number in tried:
        digits = str(number).zfill(width)
        if number < 0 or len(digits) != width:
            continue
        token = f"{letters}{separator}{digits}"
        if token in codes or corpus.holds_token(token):
            continue
        near = [code for code in codes if sum(p != q for p, q in zip(code, token)) == 1]
        if near:
            return token, near
    return None


def year_probes(mined: Mined, corpus: _Corpus) -> list[Probe]:
    """Return, for each title (or document) whose mined pairs differ in years, the year after the
    latest, when no chunk names it."""
    series: dict[str, tuple[set[int], list[Passage]]] = {}
    for pair in mined.pairs:
        if pair.difference != "date":
            continue
        years = {int(y) for token in (pair.token_a, pair.token_b) for y in _YEAR.findall(token)}
        if not years:
            continue
        key = pair.a.title or pair.a.doc_id
        found, near = series.setdefault(key, (set(), []))
        found.update(years)
        near += [pair.a, pair.b]
    probes = []
    for key, (years, near) in sorted(series.items()):
        token = str(max(years) + 1)
        if not corpus.holds_token(token):
            probes.append(Probe(probe_id=probe_id(f"{key}:{token}"), kind="year", token=token,
                                looks_like=[str(y) for y in sorted(years, reverse=True)], near=near[:2]))
    return probes


def name_probes(chunks: Sequence[Chunk], corpus: _Corpus, limit: int) -> list[Probe]:
    """Return up to `limit` names made from two titles of one kind (the same last character or word:
    两个车站, two gateways): the first character or word of one put on the other (安沙东站 from 大沙东站
    and 安贞门站), when no chunk or title holds it."""
    kinds: dict[str, list[str]] = defaultdict(list)
    first: dict[str, int] = {}
    for position, chunk in enumerate(chunks):
        title = str(chunk.metadata.get("title") or "")
        if (_CJK_NAME.fullmatch(title) or _LATIN_NAME.fullmatch(title)) and title not in first:
            first[title] = position
            kinds[_kind(title)].append(title)
    probes = []
    for kind, titles in sorted(kinds.items()):
        titles.sort(key=lambda t: hashlib.sha256(t.encode("utf-8")).hexdigest())
        for k, title in enumerate(titles if len(titles) > 1 else []):
            token = _changed(title, titles[(k + 1) % len(titles)])
            if token is None or token in first or corpus.holds_text(token):
                continue
            chunk = chunks[first[title]]
            end = min(len(chunk.text), 200)
            near = Passage(chunk_id=chunk.chunk_id, doc_id=chunk.doc_id, start=chunk.start,
                           end=None if chunk.start is None else chunk.start + end, text=chunk.text[:end],
                           title=title, section=None)
            probes.append(Probe(probe_id=probe_id(token), kind="name", token=token, looks_like=[title], near=[near]))
            break   # one name of each kind
    probes.sort(key=lambda p: p.probe_id)
    return probes[:limit]


def _kind(title: str) -> str:
    """Return what kind of thing a title names: its last CJK character, or its last word."""
    return title.split()[-1] if title.isascii() else title[-1]


def _changed(title: str, donor: str) -> str | None:
    """Return `title` with its first character (CJK) or word (Latin) taken from `donor`, or None when
    that changes nothing or gives the donor.

    >>> _changed("大沙东站", "安贞门站"), _changed("North Lake Park", "Tower Hill Park")
    ('安沙东站', 'Tower Lake Park')
    >>> print(_changed("Lumen Gateway", "Acme Gateway"))  # the donor itself
    None
    """
    if title.isascii():
        words, given = title.split(), donor.split()
        made = " ".join(given[:1] + words[1:])
    else:
        made = donor[:1] + title[1:]
    return None if made in (title, donor) else made


def probes(chunks: Sequence[Chunk], mined: Mined, names: int = 20) -> list[Probe]:
    """Return the unanswerable probes of a KB: codes, years, and up to `names` names (module docstring),
    made in each language from that language's chunks (the near misses of a Chinese probe are Chinese),
    absent from every chunk of every language."""
    corpus = _Corpus(chunks)
    languages = [language_of(c.text) for c in chunks]
    found: list[Probe] = []
    for language in sorted(set(languages)):
        part = [chunk for chunk, lang in zip(chunks, languages) if lang == language]
        own = Mined(pairs=[p for p in mined.pairs if language_of(p.a.text) == language])
        made = (code_probes(part, corpus, chunk_passages(part, lines=True)) + year_probes(own, corpus)
                + name_probes(part, corpus, names))
        found += [probe.model_copy(update={"probe_id": probe_id(f"{language}:{probe.probe_id}")}) for probe in made]
    return found
