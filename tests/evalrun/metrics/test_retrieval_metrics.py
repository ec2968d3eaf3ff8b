"""Retrieval metrics: hand-made cases written as their arithmetic, then ranx and trec_eval as references."""

from __future__ import annotations

import copy
import json
import random
from math import log2
from pathlib import Path

import numpy as np
import pytest

from tests.support import EXAMPLES

from evalrun.metrics import (
    MetricInputError,
    hit_rate,
    mean_metrics,
    metric_arrays,
    mrr,
    ndcg,
    precision,
    prepare,
    recall,
    retrieval_metrics,
)

SCIFACT = EXAMPLES / "scifact"
KS = (1, 3, 5, 10, 100)
NAMES = ("hit_rate", "recall", "precision", "mrr", "ndcg")


# Hand-made cases ==================================================================================

def test_graded_case_by_hand():
    # R = {a: 2, b: 1}; c is judged not relevant. S = x b c a.
    scores = retrieval_metrics({"q": {"a": 2, "b": 1, "c": 0}}, {"q": ["x", "b", "c", "a"]}, ks=(1, 3, 5))["q"]
    assert scores["hit_rate@1"] == 0
    assert scores["hit_rate@3"] == 1
    assert scores["recall@3"] == 1 / 2
    assert scores["recall@5"] == 2 / 2
    assert scores["precision@3"] == 1 / 3
    assert scores["precision@5"] == 2 / 5
    assert scores["mrr@1"] == 0
    assert scores["mrr@3"] == 1 / 2
    idcg = 2 / log2(2) + 1 / log2(3)
    assert scores["ndcg@1"] == 0
    assert scores["ndcg@3"] == pytest.approx((1 / log2(3)) / idcg, abs=1e-15)
    assert scores["ndcg@5"] == pytest.approx((1 / log2(3) + 2 / log2(5)) / idcg, abs=1e-15)


def test_ideal_ranking_takes_the_best_grades_first_and_stops_at_k():
    # Three relevant with grades 1, 2, 2: IDCG@2 = 2/log2(2) + 2/log2(3), whatever the qrels' order.
    scores = retrieval_metrics({"q": {"a": 1, "b": 2, "c": 2}}, {"q": ["a", "b"]}, ks=(2,))["q"]
    assert scores["ndcg@2"] == pytest.approx((1 / log2(2) + 2 / log2(3)) / (2 / log2(2) + 2 / log2(3)), abs=1e-15)
    assert scores["recall@2"] == 2 / 3


def test_copies_of_one_evidence_count_once_and_keep_their_rank():
    # a#1 and a#2 are two copies of evidence a: S = a (a) x b, the copy at rank 2 counts as not relevant.
    qrels = {"q": {"a": 2, "b": 1}}
    run = {"q": ["a#1", "a#2", "x", "b"]}
    groups = {"q": {"a#1": "a", "a#2": "a"}}
    scores = retrieval_metrics(qrels, run, ks=(3, 4), groups=groups)["q"]
    assert scores["recall@3"] == 1 / 2  # b is at rank 4: not in the first 3 ranks
    assert scores["recall@4"] == 2 / 2
    assert scores["precision@3"] == 1 / 3
    assert scores["precision@4"] == 2 / 4
    assert scores["mrr@3"] == 1 / 1
    assert scores["ndcg@4"] == pytest.approx((2 / log2(2) + 1 / log2(5)) / (2 / log2(2) + 1 / log2(3)), abs=1e-15)
    # Without the groups the copies are unknown ids and b is at rank 4 all the same.
    plain = retrieval_metrics(qrels, run, ks=(3, 4))["q"]
    assert plain["hit_rate@3"] == 0
    assert plain["mrr@4"] == 1 / 4


def test_at_k_means_the_first_k_ranks_so_a_context_of_the_first_k_candidates_loses_nothing():
    # Candidates a#1 a#2 b c; the context is their first 3. Collapsing copies before the cut would
    # put b and c into the candidates' S_3 and show a loss the context never made.
    qrels = {"q": {"a": 1, "b": 1, "c": 1}}
    groups = {"q": {"a#1": "a", "a#2": "a"}}
    candidates = retrieval_metrics(qrels, {"q": ["a#1", "a#2", "b", "c"]}, ks=(3,), groups=groups)["q"]
    context = retrieval_metrics(qrels, {"q": ["a#1", "a#2", "b"]}, ks=(3,), groups=groups)["q"]
    assert candidates == context
    assert candidates["recall@3"] == 2 / 3


def test_a_retrieved_id_repeated_counts_at_its_first_rank_only():
    scores = retrieval_metrics({"q": {"b": 1}}, {"q": ["a", "a", "a", "b"]}, ks=(2, 4))["q"]
    assert scores["mrr@2"] == 0  # S_2 = a (a)
    assert scores["mrr@4"] == 1 / 4
    scores = retrieval_metrics({"q": {"b": 1}}, {"q": ["b", "b", "b"]}, ks=(3,))["q"]
    assert scores["precision@3"] == 1 / 3 and scores["recall@3"] == 1


def test_groups_of_one_query_do_not_apply_to_another():
    qrels = {"q1": {"a": 1}, "q2": {"a": 1}}
    scores = retrieval_metrics(qrels, {"q1": ["a#1"], "q2": ["a#1"]}, ks=(1,), groups={"q1": {"a#1": "a"}})
    assert scores["q1"]["hit_rate@1"] == 1
    assert scores["q2"]["hit_rate@1"] == 0


def test_fewer_than_k_returned_under_both_precision_rules():
    qrels = {"q": {"a": 1, "b": 1, "c": 1}}
    run = {"q": ["a", "x"]}
    by_k = retrieval_metrics(qrels, run, ks=(1, 5))["q"]
    by_returned = retrieval_metrics(qrels, run, ks=(1, 5), precision_denominator="returned")["q"]
    assert by_k["precision@5"] == 1 / 5
    assert by_returned["precision@5"] == 1 / 2  # min(5, 2) returned
    assert by_k["precision@1"] == by_returned["precision@1"] == 1 / 1
    assert by_k["recall@5"] == by_returned["recall@5"] == 1 / 3
    # Only precision depends on the rule.
    assert {n: v for n, v in by_k.items() if "precision" not in n} == \
           {n: v for n, v in by_returned.items() if "precision" not in n}


def test_an_empty_run_scores_zero_and_its_returned_precision_is_undefined():
    qrels = {"q": {"a": 1}}
    by_k = retrieval_metrics(qrels, {"q": []}, ks=(1, 3))["q"]
    assert by_k == {f"{name}@{k}": 0.0 for name in NAMES for k in (1, 3)}
    by_returned = retrieval_metrics(qrels, {"q": []}, ks=(1, 3), precision_denominator="returned")["q"]
    assert by_returned["precision@1"] is None and by_returned["precision@3"] is None
    assert by_returned["recall@3"] == 0.0


def test_only_queries_in_the_run_with_a_relevant_group_are_scored():
    qrels = {"answerable": {"a": 1}, "all_grade_0": {"a": 0}, "empty": {}, "not_run": {"a": 1}}
    run = {"answerable": ["a"], "all_grade_0": ["a"], "empty": ["a"], "no_qrels": ["a"]}
    assert list(retrieval_metrics(qrels, run)) == ["answerable"]
    assert retrieval_metrics({"q": {"a": 0}}, {"q": ["a"]}) == {}
    assert retrieval_metrics({}, {}) == {}


def test_names_are_ranx_names_for_every_k_in_order():
    scores = retrieval_metrics({"q": {"a": 1}}, {"q": ("a",)}, ks=(10, 1, 3, 3))
    assert list(scores["q"]) == [f"{name}@{k}" for name in NAMES for k in (1, 3, 10)]


def test_inputs_are_not_changed():
    qrels = {"q1": {"a": 2, "b": 0}, "q2": {"c": 1}}
    run = {"q1": ["a#1", "a#2", "b", "x"], "q2": ("c", "c")}
    groups = {"q1": {"a#1": "a", "a#2": "a"}}
    before = copy.deepcopy((qrels, run, groups))
    retrieval_metrics(qrels, run, ks=(1, 2), precision_denominator="returned", groups=groups)
    assert (qrels, run, groups) == before
    arrays = prepare(qrels, run, 2, groups)
    gains = arrays.gains.copy()
    for function in (hit_rate, mrr):
        function(arrays.gains, 2)
    recall(arrays.gains, arrays.n_relevant, 2)
    precision(arrays.gains, 2, arrays.n_returned)
    ndcg(arrays.gains, arrays.ideal_gains, 2)
    assert np.array_equal(arrays.gains, gains)


def test_mean_metrics_leaves_undefined_values_out():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
    run = {"q1": ["a", "x"], "q2": ["x", "b"], "q3": []}
    means = mean_metrics(retrieval_metrics(qrels, run, ks=(2,), precision_denominator="returned"))
    assert means["mrr@2"] == (1 / 1 + 1 / 2 + 0) / 3
    assert means["precision@2"] == (1 / 2 + 1 / 2) / 2  # q3 returned nothing: undefined, not 0
    assert mean_metrics({}) == {}


def test_metric_arrays_keep_one_value_per_prepared_query():
    arrays = prepare({"q1": {"a": 1}, "q2": {"b": 2}}, {"q1": ["x", "a"], "q2": ["b"]}, max_k=2)
    columns = metric_arrays(arrays, ks=(1, 2), precision_denominator="returned")
    assert arrays.query_ids == ["q1", "q2"]
    assert columns["mrr@2"].tolist() == [1 / 2, 1 / 1]
    assert columns["precision@2"].tolist() == [1 / 2, 1 / 1]  # q2 returned one item
    assert arrays.n_returned.tolist() == [2, 1]


@pytest.mark.parametrize("qrels, run, field", [
    ({"q": {"a": 1.5}}, {"q": ["a"]}, "qrels['q']['a']"),
    ({"q": {"a": "1"}}, {"q": ["a"]}, "qrels['q']['a']"),
    ({"q": {"a": True}}, {"q": ["a"]}, "qrels['q']['a']"),
    ({"q": {"a": 300}}, {"q": ["a"]}, "qrels['q']['a']"),
    ({"q": ["a"]}, {"q": ["a"]}, "qrels['q']"),
    ({"q": {"a": 1}}, {"q": {"a": 1.0}}, "run['q']"),
    ({"q": {"a": 1}}, {"q": "a"}, "run['q']"),
    ({"q": {"a": 1}}, {"q": [["a"]]}, "run['q']"),
])
def test_bad_input_names_the_field(qrels, run, field):
    with pytest.raises(MetricInputError) as caught:
        retrieval_metrics(qrels, run)
    assert caught.value.field == field


def test_bad_settings_are_refused():
    with pytest.raises(MetricInputError, match="cutoffs"):
        retrieval_metrics({"q": {"a": 1}}, {"q": ["a"]}, ks=(0, 5))
    with pytest.raises(MetricInputError, match="cutoffs"):
        retrieval_metrics({"q": {"a": 1}}, {"q": ["a"]}, ks=())
    with pytest.raises(MetricInputError) as caught:
        retrieval_metrics({"q": {"a": 1}}, {"q": ["a"]}, precision_denominator="retrieved")
    assert caught.value.field == "precision_denominator"
    with pytest.raises(MetricInputError) as caught:
        retrieval_metrics({"q": {"a": 1}}, {"q": ["a"]}, groups={"q": ["a"]})
    assert caught.value.field == "groups['q']"
    with pytest.raises(MetricInputError, match="max_k"):
        hit_rate(np.zeros((1, 3), dtype=np.int8), 4)


def test_numpy_grades_are_accepted():
    scores = retrieval_metrics({"q": {"a": np.int64(2)}}, {"q": ["a"]}, ks=(1,))["q"]
    assert scores["ndcg@1"] == 1.0


def test_one_chunk_holding_two_facts_finds_both_groups():
    # R = {e1: 2, e2: 1, e3: 1}; c1 holds e1 and e2, c2 holds e2 and e3. S = c1 x c2.
    qrels = {"q": {"e1": 2, "e2": 1, "e3": 1}}
    groups = {"q": {"c1": ("e1", "e2"), "c2": ("e2", "e3")}}
    scores = retrieval_metrics(qrels, {"q": ["c1", "x", "c2"]}, ks=(1, 2, 3), groups=groups)["q"]
    assert scores["recall@1"] == 2 / 3            # rank 1 finds e1 and e2
    assert scores["recall@3"] == 3 / 3            # rank 3 finds e3 (e2 was found already)
    assert scores["hit_rate@1"] == 1
    assert scores["precision@1"] == 1 / 1 and scores["precision@3"] == 2 / 3   # ranks 1 and 3 find something new
    assert scores["mrr@3"] == 1 / 1
    idcg = 2 / log2(2) + 1 / log2(3) + 1 / log2(4)
    assert scores["ndcg@3"] == pytest.approx((2 / log2(2) + 1 / log2(4)) / idcg, abs=1e-15)  # rank 1 gains its best
    # a later chunk that finds nothing new counts as not relevant, like a copy
    again = retrieval_metrics(qrels, {"q": ["c1", "c1-copy"]}, ks=(2,),
                              groups={"q": {"c1": ("e1", "e2"), "c1-copy": ("e1", "e2")}})["q"]
    assert (again["recall@2"], again["precision@2"]) == (2 / 3, 1 / 2)


def test_a_chunk_mapped_to_a_one_group_tuple_scores_as_a_chunk_mapped_to_that_group():
    qrels, run = random_graded_case(seed=11)
    rng = random.Random(11)
    as_text = {q: {d: rng.choice(list(qrels[q])) for d in ids if rng.random() < 0.3} for q, ids in run.items()}
    as_tuple = {q: {d: (g,) for d, g in mapping.items()} for q, mapping in as_text.items()}
    assert retrieval_metrics(qrels, run, ks=KS, groups=as_tuple) == retrieval_metrics(qrels, run, ks=KS, groups=as_text)


def by_definition(grades: dict, ranking: list, holds: dict, k: int) -> dict:
    """Return the five metrics at k as written in prepare's rules, one rank at a time."""
    found, gains, new_counts = set(), [], []
    for chunk in ranking[:k]:
        new = [g for g in holds.get(chunk, (chunk,)) if g in grades and grades[g] > 0 and g not in found]
        found |= set(new)
        gains.append(max((grades[g] for g in new), default=0))
        new_counts.append(len(new))
    relevant = [g for g in grades.values() if g > 0]
    ideal = sorted(relevant, reverse=True)[:k]
    dcg = sum(g / log2(i + 2) for i, g in enumerate(gains))
    first = next((i for i, g in enumerate(gains) if g), None)
    return {f"hit_rate@{k}": float(bool(found)), f"recall@{k}": sum(new_counts) / len(relevant),
            f"precision@{k}": sum(1 for g in gains if g) / k, f"mrr@{k}": 0.0 if first is None else 1 / (first + 1),
            f"ndcg@{k}": dcg / sum(g / log2(i + 2) for i, g in enumerate(ideal))}


def test_chunks_holding_several_facts_score_as_defined_and_stay_in_range():
    rng = random.Random(12)
    for _ in range(300):
        facts = [f"e{n}" for n in range(rng.randint(1, 6))]
        qrels = {"q": {e: rng.choice((0, 1, 2)) for e in facts} | {facts[0]: 2}}
        chunks = [f"c{n}" for n in range(8)]
        holds = {c: tuple(rng.sample(facts, rng.randint(0, len(facts)))) for c in chunks if rng.random() < 0.8}
        ranking = rng.sample(chunks, rng.randint(0, 8))
        scores = retrieval_metrics(qrels, {"q": ranking}, ks=(1, 3, 8), groups={"q": holds})["q"]
        for k in (1, 3, 8):
            expected = by_definition(qrels["q"], ranking, holds, k)
            assert all(abs(scores[m] - v) <= 1e-12 for m, v in expected.items()), (scores, expected)
        assert all(0 <= v <= 1 + 1e-12 for v in scores.values()), scores
        assert scores["recall@1"] <= scores["recall@3"] <= scores["recall@8"]


# References: ranx and trec_eval (pytrec_eval) ===================================================

def ranx_scores(qrels: dict, run: dict, ks=KS) -> dict[str, dict[str, float]]:
    """Return {query id: {metric@K: value}} from ranx, the run's lists scored by rank."""
    ranx = pytest.importorskip("ranx")
    reference_run = ranx.Run({q: by_rank(ids) for q, ids in run.items()})
    metrics = [f"{name}@{k}" for name in NAMES for k in ks]
    ranx.evaluate(ranx.Qrels(qrels), reference_run, metrics, threads=1)
    return {q: {m: float(reference_run.scores[m][q]) for m in metrics} for q in run}


def trec_eval_scores(qrels: dict, run: dict, ks=KS) -> dict[str, dict[str, float]]:
    """Return {query id: {metric@K: value}} from trec_eval; MRR@K from recip_rank on the run cut to K."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    cutoffs = ",".join(map(str, ks))
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {f"success.{cutoffs}", f"recall.{cutoffs}",
                                                       f"P.{cutoffs}", f"ndcg_cut.{cutoffs}"}, relevance_level=1)
    measured = evaluator.evaluate({q: by_rank(ids) for q, ids in run.items()})
    out = {q: {} for q in run}
    for q in run:
        for k in ks:
            out[q] |= {f"hit_rate@{k}": measured[q][f"success_{k}"], f"recall@{k}": measured[q][f"recall_{k}"],
                       f"precision@{k}": measured[q][f"P_{k}"], f"ndcg@{k}": measured[q][f"ndcg_cut_{k}"]}
    rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}, relevance_level=1)
    for k in ks:
        cut = rr.evaluate({q: by_rank(ids[:k]) for q, ids in run.items()})
        for q in run:
            out[q][f"mrr@{k}"] = cut[q]["recip_rank"]
    return out


def by_rank(ids) -> dict[str, float]:
    """Return {id: score} whose scores put `ids` in their order, with no ties for a tool to break."""
    return {doc_id: float(len(ids) - rank) for rank, doc_id in enumerate(ids)}


def assert_same(ours: dict, reference: dict, label: str) -> None:
    """Assert every metric of every query agrees to 1e-9."""
    assert set(ours) == set(reference), label
    worst = max((abs(ours[q][m] - reference[q][m]), q, m) for q in ours for m in reference[q])
    assert worst[0] <= 1e-9, f"{label}: {worst}"


def random_graded_case(seed: int, queries: int = 60) -> tuple[dict, dict]:
    """Return (qrels, run): grades 0/1/2, 1-25 distinct retrieved ids per query, every query answerable."""
    rng = random.Random(seed)
    qrels, run = {}, {}
    for q in range(queries):
        pool = [f"d{i}" for i in range(40)]
        judged = rng.sample(pool, rng.randint(1, 12))
        qrels[f"q{q}"] = {d: rng.choice((0, 1, 2)) for d in judged}
        qrels[f"q{q}"][judged[0]] = rng.choice((1, 2))
        run[f"q{q}"] = rng.sample(pool, rng.randint(1, 25))
    return qrels, run


def test_random_graded_case_equals_ranx_and_trec_eval():
    qrels, run = random_graded_case(seed=6)
    ours = retrieval_metrics(qrels, run, ks=KS)
    assert_same(ours, ranx_scores(qrels, run), "ranx")
    assert_same(ours, trec_eval_scores(qrels, run), "trec_eval")


def test_returned_precision_is_ranx_precision_of_the_run_cut_to_k():
    # ranx's `precision` with no cutoff divides by the number returned: on S_K that is min(K, |S|).
    ranx = pytest.importorskip("ranx")
    qrels, run = random_graded_case(seed=7)
    ours = retrieval_metrics(qrels, run, ks=KS, precision_denominator="returned")
    for k in KS:
        cut = ranx.Run({q: by_rank(ids[:k]) for q, ids in run.items()})
        ranx.evaluate(ranx.Qrels(qrels), cut, "precision", threads=1)
        assert max(abs(ours[q][f"precision@{k}"] - cut.scores["precision"][q]) for q in run) <= 1e-9


def read_beir(folder: Path) -> tuple[dict, dict, dict]:
    """Return (corpus {id: text}, queries {id: text}, qrels {query id: {doc id: grade}}) of a BEIR folder."""
    with (folder / "corpus.jsonl").open(encoding="utf-8") as handle:
        corpus = {(r := json.loads(line))["_id"]: f"{r['title']} {r['text']}" for line in handle if line.strip()}
    with (folder / "queries.jsonl").open(encoding="utf-8") as handle:
        queries = {(r := json.loads(line))["_id"]: r["text"] for line in handle if line.strip()}
    qrels: dict[str, dict[str, int]] = {}
    for line in (folder / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        query_id, doc_id, grade = line.split("\t")
        qrels.setdefault(query_id, {})[doc_id] = int(grade)
    return corpus, queries, qrels


def bm25_run(corpus: dict[str, str], queries: dict[str, str], k: int = 100) -> dict[str, list[str]]:
    """Return {query id: the top k doc ids by BM25 (bm25s, curate's tokenizer)}."""
    from curate.index.bm25 import BM25
    doc_ids = list(corpus)
    positions, _ = BM25.build(list(corpus.values())).search(list(queries.values()), k=k)
    return {query_id: [doc_ids[p] for p in row] for query_id, row in zip(queries, positions.tolist())}


@pytest.fixture(scope="module")
def scifact() -> tuple[dict, dict, dict, dict]:
    """The bundled SciFact slice: (corpus, test queries, qrels, BM25 run: top 100 per test query)."""
    corpus, queries, qrels = read_beir(SCIFACT)
    queries = {q: queries[q] for q in qrels}
    return corpus, queries, qrels, bm25_run(corpus, queries)


def test_scifact_bm25_equals_ranx_and_trec_eval(scifact):
    _, _, qrels, run = scifact
    assert len(run) == 100 and all(len(ids) == 100 for ids in run.values())
    ours = retrieval_metrics(qrels, run, ks=KS)
    assert 0 < mean_metrics(ours)["recall@10"] < 1  # a real run: neither empty nor perfect
    assert_same(ours, ranx_scores(qrels, run), "ranx")
    assert_same(ours, trec_eval_scores(qrels, run), "trec_eval")


def test_scifact_with_copies_equals_the_references_on_the_run_with_copies_marked(scifact):
    # Every abstract gets a copy in the corpus; BM25 finds both, the groups say they are one
    # evidence, so the top 100 hold about 50 distinct abstracts, each copy after the first at a rank
    # of its own that is not relevant. The references see the run mapped to groups, every later copy
    # replaced by an id no qrels holds.
    corpus, queries, qrels, _ = scifact
    run = bm25_run(corpus | {f"{doc_id}#copy": text for doc_id, text in corpus.items()}, queries)
    copies = {f"{doc_id}#copy": doc_id for doc_id in corpus}
    groups = {q: copies for q in qrels}
    assert any(len({groups[q].get(d, d) for d in ids}) < len(ids) for q, ids in run.items())
    ours = retrieval_metrics(qrels, run, ks=KS, groups=groups)
    marked = {}
    for q, ids in run.items():
        mapped = [groups[q].get(d, d) for d in ids]
        marked[q] = [g if g not in mapped[:rank] else f"copy-{rank}" for rank, g in enumerate(mapped)]
    assert any(d.startswith("copy-") for ids in marked.values() for d in ids)
    assert_same(ours, ranx_scores(qrels, marked), "ranx")
    assert_same(ours, trec_eval_scores(qrels, marked), "trec_eval")
