"""SQuAD / CMRC2018-style files: paragraphs become documents, questions become items whose
evidence is the sentence holding the answer."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from rapidfuzz import fuzz

from curate.errors import InputError
from curate.fileio import JSONValueError, loads_json, read_text
from curate.formats.raw import RawItem
from curate.kb import sha256_text
from curate.records import Document
from curate.text.sentences import sentence_spans

FUZZY_MIN_SCORE = 90.0


def _answer_span(context: str, text: str, start: object) -> tuple[int, int, str] | None:
    """Return the answer's span and how it was found: at answer_start when it matches there,
    else the nearest exact occurrence, else a fuzzy match (CMRC2018 answers sometimes differ
    from their paragraph in punctuation)."""
    if isinstance(start, int) and context[start:start + len(text)] == text:
        return start, start + len(text), "exact"
    hits = []
    position = context.find(text)
    while position >= 0:
        hits.append(position)
        position = context.find(text, position + 1)
    if hits:
        near = min(hits, key=lambda p: abs(p - start) if isinstance(start, int) else p)
        return near, near + len(text), "exact"
    if len(text) > len(context):
        return None
    alignment = fuzz.partial_ratio_alignment(text, context, score_cutoff=FUZZY_MIN_SCORE)
    if alignment is None:
        return None
    return alignment.dest_start, alignment.dest_end, "fuzzy"


def _evidence_span(context: str, a: int, b: int) -> tuple[int, int]:
    """Return the span of the sentences that hold the answer span [a, b)."""
    sentences = [(s, e) for s, e in sentence_spans(context) if s < b and e > a]
    if not sentences:
        return a, b
    return min(a, sentences[0][0]), max(b, sentences[-1][1])


def read_squad(path: Path, encoding: str = "utf-8") -> tuple[list[Document], list[RawItem | InputError]]:
    """Return the paragraphs as documents and the questions as raw items with located evidence."""
    file = str(path)
    try:
        data = loads_json(read_text(path, encoding))
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({exc.msg} at column {exc.colno})", file=file, line=exc.lineno) from None
    except JSONValueError as exc:   # NaN, a key given twice...: named by its field
        raise InputError(exc.message, file=file, field=exc.field) from None
    except ValueError as exc:
        raise InputError(f"not valid JSON ({exc})", file=file) from None
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise InputError("expected a SQuAD object with a 'data' list", file=file, field="data")
    documents: list[Document] = []
    raws: list[RawItem | InputError] = []
    seen_docs: set[str] = set()
    for a_index, article in enumerate(data["data"]):
        if not isinstance(article, dict) or not isinstance(article.get("paragraphs", []), list):
            raws.append(InputError("must be an object with a 'paragraphs' list", file=file, field=f"data[{a_index}]"))
            continue
        title = article.get("title")
        for p_index, paragraph in enumerate(article.get("paragraphs", [])):
            where = f"data[{a_index}].paragraphs[{p_index}]"
            if not isinstance(paragraph, dict) or not isinstance(paragraph.get("qas", []), list):
                raws.append(InputError("must be an object with a 'context' and a 'qas' list", file=file, field=where))
                continue
            context = paragraph.get("context")
            if not isinstance(context, str) or not context.strip():
                raws.append(InputError("missing or empty", file=file, field=where + ".context"))
                continue
            doc_id = str(paragraph.get("id") or article.get("id") or f"{title or 'doc'}-{a_index}-{p_index}")
            if doc_id in seen_docs:
                raws.append(InputError(f"duplicate paragraph id '{doc_id}'", file=file, field=where + ".id"))
                continue
            seen_docs.add(doc_id)
            documents.append(Document(doc_id=doc_id, text=context, title=title if isinstance(title, str) else None,
                                      text_sha256=sha256_text(context)))
            for q_index, qa in enumerate(paragraph.get("qas", [])):
                qwhere = f"{where}.qas[{q_index}]"
                if not isinstance(qa, dict) or not isinstance(qa.get("answers", []), list):
                    raws.append(InputError("must be an object with a question and an 'answers' list", file=file,
                                           field=qwhere))
                    continue
                fields: dict = {"id": qa.get("id"), "question": qa.get("question")}
                impossible = bool(qa.get("is_impossible", False))
                answers = [a for a in qa.get("answers", []) if isinstance(a, dict) and a.get("text")]
                if impossible:
                    fields["answerable"] = False
                elif not answers:
                    raws.append(InputError("no answers and not marked is_impossible", file=file,
                                           field=qwhere + ".answers"))
                    continue
                else:
                    # The most frequent answer that can be found in the paragraph is the reference.
                    span = None
                    for reference, _ in Counter(a["text"] for a in answers).most_common():
                        first = next(a for a in answers if a["text"] == reference)
                        span = _answer_span(context, reference, first.get("answer_start"))
                        if span is not None and span[2] == "exact":
                            break
                    if span is None:
                        raws.append(InputError(f"answer {reference!r} does not occur in its paragraph", file=file,
                                               field=qwhere + ".answers"))
                        continue
                    start, end = _evidence_span(context, span[0], span[1])
                    fields["reference_answer"] = reference
                    # every accepted answer, most frequent first (the evaluation scripts score against all)
                    fields["answers"] = [text for text, _ in Counter(a["text"] for a in answers).most_common()]
                    fields["key_points"] = [{"text": reference, "evidence_ids": ["e1"]}]
                    fields["evidence"] = [{"doc_id": doc_id, "start": start, "end": end,
                                           "text": context[start:end], "grade": 2}]
                extra = {"title": title} if title else {}
                # SQuAD files have no useful line numbers; the JSON path locates the record instead.
                raws.append(RawItem(file=f"{file}#{qwhere}", line=None, fields=fields, extra=extra, format="squad"))
    return documents, raws
