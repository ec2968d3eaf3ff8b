"""The adjudication dataset: disputed items in a separate Argilla dataset (`<name>-adjudication`, same
workspace) where a reviewer sees the question, every candidate chunk and every annotator's answer,
and gives the final grades and answerability with the annotation form's own questions.

A pull writes one record per open dispute, keyed by item id (writing again updates it, only when
what it shows changed); the next pull reads the reviewers' submitted answers, which settle those
items and nothing else (see `curate.annotate.apply.apply_answers`). The local side is
datasets/NAME/adjudication.json (`curate.records.adjudication.AdjudicationState`).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import warnings
from pathlib import Path

from curate.annotate.form import Answer, answers_of, settings as form_settings
from curate.annotate.markdown import markdown_escape
from curate.annotate.state import argilla_sdk
from curate.dataset import DatasetStore
from curate.fileio import dumps_json
from curate.records import EvalItem, now
from curate.records.adjudication import AdjudicationItem, AdjudicationState
from curate.workspace import Workspace

SUFFIX = "-adjudication"
OPEN, SETTLED, CLOSED = "open", "settled", "closed"   # the record's `status` metadata
AGENT = "annotators"                                    # the suggestions' agent: what annotators agreed on
BATCH = 256


def adjudication_path(workspace: Workspace, name: str) -> Path:
    """Return where a dataset's adjudication state is kept."""
    return DatasetStore(workspace).folder(name) / "adjudication.json"


def load_adjudication(workspace: Workspace, name: str) -> AdjudicationState:
    """Return a dataset's adjudication state (empty before the first dispute)."""
    path = adjudication_path(workspace, name)
    return AdjudicationState.read(path) if path.exists() else AdjudicationState()


def find_dataset(client, name: str, workspace: str):
    """Return the Argilla dataset `name` of a workspace, or None (without the SDK's warning)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return client.datasets(name=name, workspace=workspace)


def dataset_name(annotation_dataset: str) -> str:
    """Return the name of the adjudication dataset of an Argilla annotation dataset.

    >>> dataset_name("faq")
    'faq-adjudication'
    """
    return annotation_dataset + SUFFIX


def settings(pool_k: int, guidelines: str):
    """Return the Argilla settings of an adjudication dataset: what the annotators said as fields, the
    annotation form's questions for the decision, one reviewer per record."""
    rg = argilla_sdk()
    fields = [rg.TextField(name="question", title="Question"),
              rg.TextField(name="disputes", title="What the annotators disagree on", use_markdown=True),
              rg.TextField(name="answers", title="Every annotator's answer", use_markdown=True),
              rg.TextField(name="reference_answer", title="Reference answer", required=False),
              rg.TextField(name="key_points", title="Key points (annotators' merged)", required=False)]
    fields += [rg.TextField(name=f"chunk_{n}", title=f"Candidate {n}", required=False, use_markdown=True)
               for n in range(1, pool_k + 1)]
    questions = list(form_settings(pool_k, guidelines).questions)
    metadata = [rg.TermsMetadataProperty(name=name) for name in ("status", "disputed", "language")]
    return rg.Settings(guidelines=guidelines, fields=fields, questions=questions, metadata=metadata,
                       distribution=rg.TaskDistribution(min_submitted=1))


def _answer_text(answer: Answer, slots: list[str]) -> str:
    """Return one annotator's answer as Markdown: label, grades, key points, corrections, comment."""
    grades = " · ".join(f"{n}: **{answer.grade(n)}**" for n in range(1, len(slots) + 1))
    # what annotators typed is shown as typed (escaped), not read as Markdown
    lines = [f"#### {markdown_escape(answer.user)}", f"- answerable: **{answer.answerable or '(not given)'}**",
             f"- grades: {grades}"]
    if (answer.key_points or "").strip():
        lines.append("- key points:")
        lines += [f"    - {markdown_escape(line)}" for line in answer.key_points.splitlines() if line.strip()]
    for label, text in (("question corrected", answer.question), ("answer corrected", answer.answer),
                        ("comment", answer.comment)):
        if (text or "").strip():
            lines.append(f"- {label}: {markdown_escape(text)}")
    return "\n".join(lines)


def adjudication_record(item: EvalItem, slots: list[str], texts: dict[str, tuple[str, str]],
                        answers: list[Answer], disputed: list[str], proposal: Answer):
    """Return the Argilla record of one disputed item (id = item id) and the digest of what it shows.

    `proposal` is the annotators' answers merged (`apply.merged_answer`): the grades and label they
    agree on are suggested, disputed ones are left for the reviewer; `texts` maps chunk id ->
    (title, text)."""
    rg = argilla_sdk()
    fields = {"question": item.question,
              "disputes": "\n".join(f"- {markdown_escape(line)}" for line in disputed),
              "answers": "\n\n".join(_answer_text(a, slots) for a in answers)}
    if item.reference_answer:
        fields["reference_answer"] = item.reference_answer
    if (proposal.key_points or "").strip():
        fields["key_points"] = proposal.key_points
    suggestions = []
    for n, chunk_id in enumerate(slots, start=1):
        title, text = texts.get(chunk_id, ("", "(no longer in the knowledge base)"))
        grades = {a.user: a.grade(n) for a in answers}
        agreed = len(set(grades.values())) == 1
        said = " · ".join(f"{markdown_escape(user)} **{grade}**" for user, grade in grades.items())
        code = f"`{chunk_id}`" if "`" not in chunk_id else markdown_escape(chunk_id)
        heading = f"**{markdown_escape(title)}** · {code}" if title.strip() else code
        fields[f"chunk_{n}"] = f"{heading}\n\ngrades: {said}{'' if agreed else ' ⚠ differ'}\n\n{text}"
        if agreed:
            suggestions.append(rg.Suggestion(question_name=f"relevance_{n}", value=grades[answers[0].user],
                                             agent=AGENT))
    labels = {a.answerable for a in answers if a.answerable is not None}
    if len(labels) == 1:
        suggestions.append(rg.Suggestion(question_name="answerable", value=labels.pop(), agent=AGENT))
    if fields.get("key_points"):
        suggestions.append(rg.Suggestion(question_name="key_points_fixed", value=fields["key_points"], agent=AGENT))
    kinds = sorted({"answerability" if line.startswith("answerable") else "grade" for line in disputed})
    metadata = {"status": OPEN, "disputed": kinds, "language": item.language}
    digest = hashlib.sha256(dumps_json({"fields": fields, "metadata": metadata, "suggestions": [
        (s.question_name, s.value) for s in suggestions]}).encode("utf-8")).hexdigest()
    return rg.Record(id=item.id, fields=fields, metadata=metadata, suggestions=suggestions), digest


def write_disputes(client, adjudication: AdjudicationState, *, annotation_dataset: str, argilla_workspace: str,
                   pool_k: int, guidelines: str, records: list[tuple[str, object, str, list[str]]]) -> bool:
    """Write the records (item id, record, digest, disputed) whose content changed to the adjudication
    dataset, creating it on first use; return whether it was created."""
    from curate.annotate.remote import ensure_dataset

    rg = argilla_sdk()
    name = adjudication.dataset or dataset_name(annotation_dataset)
    # found whole, or (re)built when a pull died while creating it (see `curate.annotate.remote`)
    made = ensure_dataset(client, rg, client.workspaces(argilla_workspace), name, settings(pool_k, guidelines))
    target, created = made.dataset, made.created
    adjudication.dataset, adjudication.workspace = name, argilla_workspace
    changed = [(item_id, record, digest, disputed) for item_id, record, digest, disputed in records
               if created or item_id not in adjudication.items or adjudication.items[item_id].digest != digest
               or adjudication.items[item_id].settled_at is not None]
    for start in range(0, len(changed), BATCH):
        batch = [record for _, record, _, _ in changed[start:start + BATCH]]
        with contextlib.redirect_stderr(io.StringIO()):   # the SDK's own progress bar is not for our users
            target.records.log(batch, batch_size=len(batch))
    written = now()
    for item_id, _, digest, disputed in changed:
        adjudication.items[item_id] = AdjudicationItem(digest=digest, pushed_at=written, disputed=disputed)
    return created


def decisions_of(records: list[dict], usernames: dict[str, str], adjudicator: str | None = None) -> dict[str, list[Answer]]:
    """Return the submitted decisions per item id from the adjudication dataset's records (as the API
    lists them); with `adjudicator`, only that user's."""
    decisions = {}
    for record in records:
        answers = [a for a in answers_of(record.get("responses") or [], usernames)
                   if adjudicator is None or a.user == adjudicator]
        if answers:
            decisions[str(record.get("external_id") or record["id"])] = answers
    return decisions

