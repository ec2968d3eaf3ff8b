"""Claims end where curate's one sentence splitter ends sentences (its rules are tested in
tests/curate/text/test_sentences.py); chunk ids with dots do not cut a claim and citation markers keep
their owners."""

from evalrun.scoring.claims import split_claims


def test_claims_are_the_sentences_of_the_one_splitter():
    answer = "The U.S. team, e.g. Dr. Li, fixed v2.0.1 at 9 a.m. today. 令牌已过期。Smith et al. agree (Fig. 2)."
    assert [c.text for c in split_claims(answer)] == [
        "The U.S. team, e.g. Dr. Li, fixed v2.0.1 at 9 a.m. today.", "令牌已过期。", "Smith et al. agree (Fig. 2)."]


def test_a_chunk_id_with_dots_never_ends_a_claim_and_markers_keep_their_owner():
    ids = {"kb.md#2", "faq.v2.md#3", "手册.md#1"}
    answer = ("Reset it [kb.md#2]. The U.S. team, e.g. Dr. Li, owns v2.0.1 [faq.v2.md#3]. "
              "[手册.md#1] 令牌一小时后过期[kb.md#2]。Yes.")
    claims = split_claims(answer, ids)
    assert [(c.text, c.citations) for c in claims] == [
        ("Reset it.", ["kb.md#2"]),
        ("The U.S. team, e.g. Dr. Li, owns v2.0.1.", ["faq.v2.md#3", "手册.md#1"]),   # leading marker: claim before
        ("令牌一小时后过期。", ["kb.md#2"]),
    ]


def test_an_unknown_bracketed_text_stays_text_and_can_hold_dots():
    claims = split_claims("See [Fig. 2] for the U.S. limits. Done it.", ["kb#1"])
    assert [c.text for c in claims] == ["See [Fig. 2] for the U.S. limits.", "Done it."]
