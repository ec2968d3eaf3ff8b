"""Claims: an answer split into sentences, with the inline citations each claim carries.

Where a sentence ends is curate's one rule (`curate.text.sentences.sentence_spans`, also the chunker's,
the SQuAD reader's and the leakage check's): Chinese 。！？；, English ends by sentencex's rules (so "U.S.",
"e.g.", "Dr.", "9 a.m.", "3.5", "v2.0.1" and URLs do not end a claim), "; " and line breaks. Inline
citations are masked while splitting, so an id such as ``kb.md#2`` never ends a sentence.

Citation rule (kept simple on purpose):

* An inline citation is a chunk id in square brackets, ``[id]`` or ``【id】`` (several ids may share
  one pair, split by commas or semicolons), where the id is one the caller knows about (in
  evalrun.scoring.generation: the trace's ``citations``, its context chunk ids and every chunk id of
  `chunk_texts`); any other bracketed text is left alone as ordinary text.
* It belongs to the claim whose sentence contains it; a marker that opens a sentence (nothing but
  other markers before it, as in ``Foo. [a#1] Bar.``) belongs to the claim before it.
* Markers are removed from the claim text the judge sees. A claim with fewer than
  `MIN_CLAIM_CHARS` letters or digits ("Yes.", "是的。", a bare marker) is dropped; its markers
  move to the nearest kept claim before it, else to the first kept claim after it.
* A chunk id in the trace's ``citations`` that appears nowhere inline is a *listed* citation: it is
  correct when the chunk supports at least one claim of the answer (see evalrun.scoring.generation).
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable
from dataclasses import dataclass, field

from curate import sentence_spans

MIN_CLAIM_CHARS = 4
_MARKER = re.compile(r"\[([^\[\]\n]{1,200})\]|【([^【】\n]{1,200})】")


@dataclass
class Claim:
    """One sentence of an answer, without its citation markers, and the chunk ids it cites."""

    text: str
    citations: list[str] = field(default_factory=list)


def _letters(text: str) -> int:
    return sum(ch.isalnum() for ch in text)


def citation_markers(answer: str, known: Iterable[str] | Container[str]) -> list[tuple[int, int, str]]:
    """Return (start, end, chunk id) of every inline citation of a known chunk id.

    >>> citation_markers("Reset it [kb.md#2]. See [note] 【手册.md#1】", ["kb.md#2", "手册.md#1"])
    [(9, 18, 'kb.md#2'), (31, 40, '手册.md#1')]
    """
    known = known if hasattr(known, "__contains__") else set(known)
    found = []
    for match in _MARKER.finditer(answer):
        ids = [part.strip() for part in re.split(r"[,，;；]", match.group(1) or match.group(2))]
        for chunk_id in ids:
            if chunk_id in known:
                found.append((match.start(), match.end(), chunk_id))
    return found


def _masked(answer: str, markers: list[tuple[int, int, str]]) -> str:
    """Return the answer with the inside of each citation marker blanked (same length), so that an
    id such as kb.md#2 cannot end a sentence."""
    chars = list(answer)
    for start, end, _ in markers:
        chars[start + 1:end - 1] = "x" * (end - start - 2)
    return "".join(chars)


def split_claims(answer: str, known_ids: Iterable[str] | Container[str] = ()) -> list[Claim]:
    """Return the claims of an answer, with the inline citations of `known_ids` each one carries.

    Chinese and English sentence ends both split; "3.5", "e.g." and "U.S." do not:

    >>> [c.text for c in split_claims("错误码 LG-4031 表示令牌过期。请重新登录！Version 3.5 fixed it. Yes.")]
    ['错误码 LG-4031 表示令牌过期。', '请重新登录！', 'Version 3.5 fixed it.']
    >>> [c.text for c in split_claims("The U.S. office, e.g. Dr. Smith, resets it. It takes one hour.")]
    ['The U.S. office, e.g. Dr. Smith, resets it.', 'It takes one hour.']

    A citation belongs to the claim containing it, or to the claim before it when it opens a sentence:

    >>> claims = split_claims("令牌已过期[a#1]。需要重新登录。[b#2] It expires daily. [c#3]", ["a#1", "b#2", "c#3"])
    >>> [(c.text, c.citations) for c in claims]
    [('令牌已过期。', ['a#1']), ('需要重新登录。', ['b#2']), ('It expires daily.', ['c#3'])]

    Short claims are dropped and their citations move to a neighbour:

    >>> [(c.text, c.citations) for c in split_claims("是的[a#1]。The token lasts one hour.", ["a#1"])]
    [('The token lasts one hour.', ['a#1'])]
    """
    markers = citation_markers(answer, known_ids)
    spans = sentence_spans(_masked(answer, markers))
    raw: list[tuple[str, list[str]]] = []
    for a, b in spans:
        inside = [m for m in markers if a <= m[0] < b]
        # Markers at the very start of a sentence belong to the sentence before it.
        leading, position = [], a
        for start, end, chunk_id in inside:
            if answer[position:start].strip():
                break
            leading.append(chunk_id)
            position = end
        if leading and raw:
            raw[-1][1].extend(leading)
            own = [m[2] for m in inside][len(leading):]
        else:
            own = [m[2] for m in inside]
        text = answer[a:b]
        for start, end, _ in sorted({(m[0], m[1], "") for m in inside}, reverse=True):
            text = text[:start - a] + text[end - a:]
        text = re.sub(r"[ \t]+([。！？；.!?;,，])", r"\1", " ".join(text.split())).strip()
        raw.append((text, own))
    claims: list[Claim] = []
    orphans: list[str] = []
    for text, cited in raw:
        if _letters(text) < MIN_CLAIM_CHARS:
            (claims[-1].citations if claims else orphans).extend(cited)
            continue
        claims.append(Claim(text, orphans + cited))
        orphans = []
    for claim in claims:
        claim.citations = list(dict.fromkeys(claim.citations))
    return claims


def strip_markers(answer: str, known_ids: Iterable[str] | Container[str]) -> str:
    """Return the answer without its inline citations of known chunk ids.

    >>> strip_markers("Reset it [kb.md#2].", ["kb.md#2"])
    'Reset it.'
    """
    text = answer
    for start, end in sorted({(m[0], m[1]) for m in citation_markers(answer, known_ids)}, reverse=True):
        text = text[:start] + text[end:]
    return re.sub(r"[ \t]+([。！？；.!?;,，])", r"\1", text).strip()
