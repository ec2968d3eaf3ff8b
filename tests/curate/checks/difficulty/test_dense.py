"""Dense ranks in grading: used only when the KB is already embedded, built when asked, never with a
model that cannot read the KB, and every skip said in one line and kept in the grade record."""

from __future__ import annotations

import pytest

from curate.checks.difficulty import grade
from curate.dataset import DatasetStore
from curate.index import embeddings
from curate.index.kb_index import KBIndex
from tests.curate.checks.difficulty.test_difficulty import use_minilm


@pytest.fixture
def drug_ws(drugs, monkeypatch):
    """The Chinese drug KB and its items, MiniLM (which reads Chinese as unknown tokens) as the model."""
    use_minilm(drugs.workspace, monkeypatch)
    return drugs


def no_model(monkeypatch) -> None:
    """Make loading any embedding model fail: what runs after this must need none."""
    def refuse(model):
        raise AssertionError(f"loaded {model}")
    monkeypatch.setattr(embeddings, "load_model", refuse)


def test_dense_is_skipped_in_one_line_when_the_kb_is_not_embedded(handbook, monkeypatch):
    use_minilm(handbook.workspace, monkeypatch)
    no_model(monkeypatch)                      # the default never loads a model to find out
    result = handbook("grade", "--dataset", "faq")
    record = DatasetStore(handbook.workspace).meta("faq").checks.difficulty
    snapshot = record.kb_snapshot
    model = handbook.workspace.setting("embedding", "model")
    reason = (f"the 9 chunks of {snapshot} are not embedded with {model} yet; `curate grade --dense` embeds them "
              f"once, saying first how long it will take, and later grades reuse them")
    assert [line for line in result.stderr.splitlines() if "dense" in line] == [f"note: dense ranks skipped: {reason}"]
    assert (record.settings["dense"], record.settings["dense_reason"]) == ("skipped", f"dense ranks skipped: {reason}")
    assert record.settings["embedding_model"] == model
    assert not any("dense_rank" in i.difficulty_features for i in DatasetStore(handbook.workspace).items("faq"))


def test_no_dense_says_so_too(handbook):
    result = handbook("grade", "--dataset", "faq", "--no-dense")
    assert "note: dense ranks skipped: --no-dense" in result.stderr.splitlines()
    settings = DatasetStore(handbook.workspace).meta("faq").checks.difficulty.settings
    assert (settings["dense"], settings["dense_reason"]) == ("skipped", "dense ranks skipped: --no-dense")


def test_dense_builds_the_chunk_vectors_once_and_later_grades_reuse_them(handbook, monkeypatch):
    ws = handbook.workspace
    use_minilm(ws, monkeypatch)
    first = grade(ws, dataset="faq", dense=True)
    model = ws.setting("embedding", "model")
    index = KBIndex(ws, first.kb_snapshot)
    vectors = index.stored_dense(model)
    assert vectors is not None and vectors.shape == (9, 384)
    meta = index.dense_meta(model)
    assert meta.built and (meta.sampled, meta.unreadable) == (9, 3)   # the 3 Chinese chunks; 6 English
    assert not (index.folder / "embeddings").exists()                  # the build's scratch is gone

    def rebuild(*args, **kwargs):
        raise AssertionError("embedded the KB again")
    monkeypatch.setattr(KBIndex, "build_dense", rebuild)
    again = grade(ws, dataset="faq")                       # the default: stored vectors are used
    assert again.record.settings["dense"] == "partial"                 # the Chinese questions left out
    assert {g.id: g.features.get("dense_rank") for g in again.items} == \
        {g.id: g.features.get("dense_rank") for g in first.items}


def test_a_model_that_cannot_read_the_kb_is_never_used(drug_ws, monkeypatch):
    ws = drug_ws.workspace
    embedded = []
    original = embeddings.EmbeddingCache.embed

    def embed(self, texts, description="embedding"):
        embedded.extend(texts)
        return original(self, texts, description)
    monkeypatch.setattr(embeddings.EmbeddingCache, "embed", embed)
    result = drug_ws("grade", "--dataset", "drugs", "--dense")
    record = DatasetStore(ws).meta("drugs").checks.difficulty
    model = ws.setting("embedding", "model")
    reason = (f"{model} cannot read 3 of 3 sampled chunks of {record.kb_snapshot}, so its ranks would be noise; "
              f"set [embedding] model in curate.toml to a model that reads the KB's language")
    assert [line for line in result.stderr.splitlines() if "dense" in line] == [f"note: dense ranks skipped: {reason}"]
    assert (record.settings["dense"], record.settings["dense_reason"]) == ("skipped", f"dense ranks skipped: {reason}")
    assert embedded == []                                  # not one chunk or question was embedded
    assert KBIndex(ws, record.kb_snapshot).stored_dense(model) is None
    # the verdict is kept: the next grade says the same without loading the model again
    no_model(monkeypatch)
    result = drug_ws("grade", "--dataset", "drugs")
    assert f"note: dense ranks skipped: {reason}" in result.stderr.splitlines()
