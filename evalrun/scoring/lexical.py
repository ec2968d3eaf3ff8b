"""Lexical answer signals that need no judge: exact match and F1 against the accepted answers,
key-point token coverage, and refusal phrases.

These compare strings, not meanings: a paraphrase scores low and a wrong answer that reuses the
reference's words scores high. They stand beside the judge's generation metrics, never in place.

Normalisation follows the official evaluation scripts, picked by the item's language:

* Chinese (a language starting with "zh"): CMRC2018's ``cmrc2018_evaluate.py``. Kept as the script
  has it: lower-case and strip; the script's punctuation list (`CMRC_PUNCTUATION`) removed without
  splitting the text around it ("LG-4031" -> "lg4031"); every character in U+4E00..U+9FA5 its own
  token; exact match compares the lower-cased, stripped text with that list removed (white space
  inside is kept, so "北 京" is not "北京"); F1 from the longest common *contiguous* run of tokens,
  precision = run / prediction tokens, recall = run / reference tokens. The script cuts the text
  between Chinese characters with ``nltk.word_tokenize``, which needs a data download; here that
  text is cut into runs of letters and digits ("3.5", "v2.0.1", "u.s" and "1,000" stay whole, an
  apostrophe joins: "don't" -> "dont"), and every other punctuation character the script would
  have kept as a token of its own (. , ! ? ( ) 【 】 … and the like) is dropped: "北京." against
  "北京" has F1 1.0 here and 0.8 in the script.
* Any other language: SQuAD's ``evaluate-v2.0.py``, exactly: lower-case, remove
  ``string.punctuation``, remove the articles a/an/the, collapse white space, split on it; exact
  match compares those strings, F1 counts the tokens both share (a multiset).

Both take the maximum over every accepted answer; an accepted answer that normalises to nothing is
skipped (SQuAD does the same), and with none left there is no score ("no reference answer"). An
answer that is None or empty scores 0: it answered nothing.

Refusals (`refusal_phrase`) are read from phrases in both languages in a short answer's first
sentence, declining for want of access among them ("you do not have access", "无权查看"); the scorer
uses them for unanswerable items, items whose asker may use none of the evidence, and false refusals.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from collections.abc import Container, Iterable

from curate import sentence_spans
from evalrun.scoring.claims import strip_markers

METRICS = ("lexical/exact_match", "lexical/f1", "lexical/key_point_coverage")

# cmrc2018_evaluate.py's sp_char list, as the script has it (its "……" entry never equals one
# character, so a lone … is not in it).
CMRC_PUNCTUATION = frozenset("-:_*^/\\~`+=，。：？！“”；’《》·、「」（）－～『』")
_APOSTROPHES = frozenset("'‘")  # joined like the list's ’ ("don't" is one word)
_RUN_TOKEN = re.compile(r"[^\W_]+(?:(?:\.|(?<=\d),(?=\d))[^\W_]+)*")
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_DROP_ASCII_PUNCTUATION = str.maketrans("", "", string.punctuation)
_DROP_CMRC_PUNCTUATION = str.maketrans("", "", "".join(CMRC_PUNCTUATION))


def is_chinese(language: str | None) -> bool:
    """Return True for a Chinese language code ("zh", "zh-CN", "zh_Hant").

    >>> is_chinese("zh-CN"), is_chinese("en")
    (True, False)
    """
    return (language or "").lower().startswith("zh")


def squad_normalize(text: str) -> str:
    """Return the text as SQuAD's normalize_answer leaves it: lower-cased, without
    string.punctuation and the articles a/an/the, white space collapsed.

    >>> squad_normalize("The U.S. Office, (an) HQ!")
    'us office hq'
    """
    text = text.lower().translate(_DROP_ASCII_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def cmrc_remove_punctuation(text: str) -> str:
    """Return the text as CMRC2018's remove_punctuation leaves it for exact match: lower-cased,
    stripped, without the script's punctuation list (other characters, white space too, stay).

    >>> cmrc_remove_punctuation(" 《三体》：刘慈欣 ")
    '三体刘慈欣'
    """
    return text.lower().strip().translate(_DROP_CMRC_PUNCTUATION)


def cmrc_tokens(text: str) -> list[str]:
    """Return CMRC2018's mixed segmentation of the text: each Chinese character one token, the text
    between them cut into runs of letters and digits, punctuation removed (rules: module docstring).

    >>> cmrc_tokens("错误码 LG-4031 表示 token 过期（见 v2.0.1）。")
    ['错', '误', '码', 'lg4031', '表', '示', 'token', '过', '期', '见', 'v2.0.1']
    """
    tokens: list[str] = []
    run: list[str] = []
    for ch in text.lower().strip():
        if ch in CMRC_PUNCTUATION or ch in _APOSTROPHES:
            continue
        if "\u4e00" <= ch <= "\u9fa5":
            tokens.extend(_RUN_TOKEN.findall("".join(run)))
            run.clear()
            tokens.append(ch)
        else:
            run.append(ch)
    tokens.extend(_RUN_TOKEN.findall("".join(run)))
    return tokens


def tokens(text: str, language: str | None) -> list[str]:
    """Return the text's normalised tokens by the rules of its language (CMRC2018 or SQuAD).

    >>> tokens("LG-4031 表示令牌过期", "zh"), tokens("The token expired.", "en")
    (['lg4031', '表', '示', '令', '牌', '过', '期'], ['token', 'expired'])
    """
    return cmrc_tokens(text) if is_chinese(language) else squad_normalize(text).split()


def longest_common_substring(a: list[str], b: list[str]) -> int:
    """Return the length of the longest run of tokens that a and b both contain contiguously
    (CMRC2018's find_lcs).

    >>> longest_common_substring(list("令牌已经过期"), list("令牌过期了"))
    2
    """
    best = 0
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0] * (len(b) + 1)
        for j, y in enumerate(b):
            if x == y:
                current[j + 1] = previous[j] + 1
                best = max(best, current[j + 1])
        previous = current
    return best


def _f1(common: int, predicted: int, reference: int) -> float:
    if common == 0:
        return 0.0
    precision, recall = common / predicted, common / reference
    return 2 * precision * recall / (precision + recall)


def _references(references: Iterable[str], language: str | None) -> list[str]:
    """Return the accepted answers that keep a token once normalised (SQuAD skips the others too)."""
    return [r for r in references if tokens(r, language)]


def exact_match(answer: str, references: Iterable[str], language: str | None) -> float | None:
    """Return 1.0 when the answer equals any accepted answer once both are normalised, else 0.0;
    None when no accepted answer is left after normalisation.

    >>> exact_match("The 24 hours.", ["one day", "24 hours"], "en"), exact_match("北京。", ["北京"], "zh")
    (1.0, 1.0)
    """
    usable = _references(references, language)
    if not usable:
        return None
    normal = cmrc_remove_punctuation if is_chinese(language) else squad_normalize
    prediction = normal(answer)
    return float(any(prediction == normal(r) for r in usable))


def f1(answer: str, references: Iterable[str], language: str | None) -> float | None:
    """Return the best F1 of the answer over the accepted answers; None when none is left.

    English, per reference: common = |tokens(answer) ∩ tokens(reference)| (multiset),
    P = common / |tokens(answer)|, R = common / |tokens(reference)|, F1 = 2PR / (P + R).
    Chinese: common = the longest common contiguous run of tokens instead.

    >>> f1("It takes five days.", ["five business days"], "en") == 2 * (2/4) * (2/3) / (2/4 + 2/3)
    True
    >>> f1("令牌已经过期", ["令牌过期"], "zh") == 2 * (2/6) * (2/4) / (2/6 + 2/4)
    True
    """
    usable = _references(references, language)
    if not usable:
        return None
    predicted = tokens(answer, language)
    if not predicted:
        return 0.0
    best = 0.0
    for reference in usable:
        wanted = tokens(reference, language)
        if is_chinese(language):
            common = longest_common_substring(wanted, predicted)
        else:
            common = sum((Counter(wanted) & Counter(predicted)).values())
        best = max(best, _f1(common, len(predicted), len(wanted)))
    return best


def key_point_token_coverage(answer: str, key_points: Iterable[str], language: str | None) -> float | None:
    """Return the mean over key points of the share of each key point's tokens found in the answer;
    None when no key point has a token.

    coverage = mean over key points k of |tokens(k) ∩ tokens(answer)| / |tokens(k)| (multisets, the
    tokens of `tokens`). Lexical, not semantic: "expired" does not cover "no longer valid", and a
    Chinese key point is covered character by character, in any order.

    >>> key_point_token_coverage("The token expired after one hour.", ["token expired", "contact the admin"], "en")
    0.5
    >>> key_point_token_coverage("令牌一小时后过期", ["令牌过期", "联系管理员"], "zh") == (4/4 + 0/5) / 2
    True
    """
    have = Counter(tokens(answer, language))
    shares = []
    for key_point in key_points:
        wanted = Counter(tokens(key_point, language))
        if wanted:
            shares.append(sum((wanted & have).values()) / sum(wanted.values()))
    return sum(shares) / len(shares) if shares else None


# -- the lexical verdict, for attribution where no judge gave one ---------------------------------------

KEY_POINT_COVERED = 0.5  # a key point with at least half its tokens in the answer is not missed, lexically
ANSWER_MATCHED_F1 = 0.5  # without key points: F1 against the accepted answers at least this is no miss


def _contains(haystack: list[str], needle: list[str]) -> bool:
    """Return whether the tokens `needle` occur in `haystack` contiguously, in order."""
    width = len(needle)
    return any(haystack[k:k + width] == needle for k in range(len(haystack) - width + 1))


def lexical_miss(answer: str | None, *, answers: Iterable[str], key_points: Iterable[str], language: str | None,
                 known_ids: Iterable[str] | Container[str] = ()) -> str | None:
    """Return why the answer misses by string match alone, or None when it does not (or nothing tells).

    The answer does not miss when it holds an accepted answer (its tokens contiguously, or an exact
    match). Otherwise, with key points, it misses when any key point has fewer than KEY_POINT_COVERED
    of its tokens in the answer, or a number the answer lacks; without key points, when its best F1
    against the accepted answers is below ANSWER_MATCHED_F1, or every accepted answer has a number the
    answer lacks. With neither accepted answers nor key points nothing tells (None). Strings,
    not meanings: "half a minute" misses "30 seconds" here; the judge's verdict, where there is one,
    decides instead.

    >>> lexical_miss("Tokens last one hour.", answers=["24 hours"], key_points=["token expires after 24 hours"],
    ...              language="en")
    'no accepted answer in it; key point 1 of 1 (token expires after 24 hours): 0 of 5 tokens in the answer'
    >>> print(lexical_miss("The limit is 600 requests per minute per key.", answers=["600 requests"], key_points=[],
    ...                    language="en"))
    None
    >>> lexical_miss("访问令牌已经失效。", answers=["令牌过期"], key_points=["令牌过期", "重新登录"], language="zh")
    'no accepted answer in it; key point 2 of 2 (重新登录): 0 of 4 tokens in the answer'

    A number (any token with a digit: an amount, a year, a version, a code) of a key point or, without key
    points, of every accepted answer must be in the answer: "每分钟 100 次" misses "每分钟 600 次".

    >>> lexical_miss("默认限额为每个密钥每分钟 100 次请求", answers=[], key_points=["每个密钥每分钟 600 次"], language="zh")
    'no accepted answer to match; key point 1 of 1 (每个密钥每分钟 600 次): its number 600 is not in the answer'
    >>> lexical_miss("It raises the default from 15 to 60 seconds.", answers=["from 15 to 30 seconds"], key_points=[],
    ...              language="en")
    'no accepted answer in it; token F1 0.62, but its number 30 is not in it'
    """
    text = strip_markers(answer or "", known_ids) if answer and known_ids else (answer or "")
    have = tokens(text, language)
    usable = _references(answers, language)
    if any(_contains(have, tokens(r, language)) for r in usable) or exact_match(text, usable, language):
        return None
    points = [(k, Counter(tokens(k, language))) for k in key_points]
    points = [(k, wanted) for k, wanted in points if wanted]
    if not points and not usable:
        return None
    opening = "no accepted answer in it" if usable else "no accepted answer to match"
    if not points:
        best = f1(text, usable, language) or 0.0
        if best < ANSWER_MATCHED_F1:
            return f"{opening}; best token F1 {best:.2f}"
        missing = [_numbers(tokens(r, language)) - set(have) for r in usable]
        if all(missing):
            lacking = ", ".join(sorted(min(missing, key=len)))
            return f"{opening}; token F1 {best:.2f}, but its number {lacking} is not in it"
        return None
    counts = Counter(have)
    for number, (key_point, wanted) in enumerate(points, start=1):
        found, total = sum((wanted & counts).values()), sum(wanted.values())
        shown = key_point if len(key_point) <= 60 else key_point[:57] + "..."
        if found < KEY_POINT_COVERED * total:
            return f"{opening}; key point {number} of {len(points)} ({shown}): {found} of {total} tokens in the answer"
        if missing := _numbers(wanted) - counts.keys():
            return (f"{opening}; key point {number} of {len(points)} ({shown}): its number "
                    f"{', '.join(sorted(missing))} is not in the answer")
    return None


def _numbers(wanted: Iterable[str]) -> set[str]:
    """Return the tokens that hold a digit: an amount, a date, a version, a code. A different number is a
    different fact, however many of the other tokens match."""
    return {t for t in wanted if any(ch.isdigit() for ch in t)}


# -- refusals ---------------------------------------------------------------------------------------

MAX_REFUSAL_TOKENS = {"en": 60, "zh": 100}  # a longer answer is an answer, whatever its opening says
_NOT_ADDRESSED = r"(?<!您)(?<!你)(?<!如果)(?<!若)(?<!是否)"  # "如果您不知道密码" is advice, not a refusal
_SUBJECT = r"(?:context|documents?|passages?|sources?|text|manual|knowledge base|information provided|materials?)"
# Declining for want of access, said to the asker ("you do not have access"): a conditional ("if you do not
# have access, ask IT") is advice, not a refusal; "interns have no access" answers a question about access.
_ASKER = r"(?<!\bif )(?<!\bwhen )\b(?:you|your (?:role|account|group|access level))"
_RIGHTS = r"(?:access|permissions?|rights|clearance|authori[sz]ation|privileges)"
_PHRASES = {
    "en": [
        ("I don't know", r"\bi (?:don't|do not|dont) know\b"),
        ("I'm not sure", r"\bi(?:'m| am) not sure\b"),
        ("cannot answer", r"\b(?:cannot|can't|can not|could not|couldn't|unable to|not able to) "
                          r"(?:answer|determine|tell)\b"),
        ("cannot answer", r"\b(?:cannot|can't|can not) be (?:answered|determined)\b"),
        ("I couldn't find", r"\bi (?:couldn't|could not|can't|cannot|can not|was unable to|was not able to|"
                            r"am unable to|didn't|did not) find\b"),
        ("I don't have the information", r"\bi (?:don't|do not) have (?:enough |any |the |sufficient |relevant )*"
                                         r"(?:information|details|data)\b"),
        # "No information is stored on the device" answers; "no information about it" does not
        ("no information", r"(?:^|\b(?:there is|there's|there was|i have|i found|contains?|provides?|gives?|has|have) )"
                           r"no (?:relevant |specific |such |further |additional )?information"
                           r"(?: (?:about|on|regarding|in|available|is available|was found)\b|[.!]?$|,)"),
        ("not enough information", r"\b(?:not enough|insufficient) (?:information|context|details)\b"),
        ("not mentioned", r"\b(?:not|never|isn't|aren't|wasn't|weren't) (?:explicitly )?mentioned\b"),
        ("not mentioned", r"\bno mention of\b"),
        ("does not contain", _SUBJECT + r" (?:does not|doesn't|do not|don't) (?:contain|include|provide|mention|"
                             r"say|specify|cover|state)\b"),
        ("does not contain", r"\b(?:does not|doesn't|do not|don't) (?:contain|include|provide) (?:any |enough |the |"
                             r"this |such |specific |relevant |sufficient )*(?:information|details|answer)\b"),
        ("not provided in the context", r"\bnot (?:provided|given|available|found|included|present|stated) in "
                                        r"(?:the |any of the )?(?:provided |given )?" + _SUBJECT + r"\b"),
        ("you do not have access", _ASKER + r" (?:do not|don't|does not|doesn't|lacks?) (?:have )?(?:the )?"
                                   r"(?:necessary |required |sufficient |needed )?" + _RIGHTS + r"\b"),
        ("you do not have access", _ASKER + r" (?:has|have) no " + _RIGHTS + r"\b"),
        ("not authorised", _ASKER + r"(?:'re not| are not| aren't| is not| isn't| not) (?:authori[sz]ed|permitted|"
                           r"allowed|cleared|entitled)\b"),
        ("not authorised", r"\b(?:not authori[sz]ed|unauthori[sz]ed|not permitted) to (?:see|view|access|read|receive|"
                           r"know|share|disclose)\b"),
        ("access denied", r"\b(?:access|permission) (?:is |was )?(?:denied|restricted)\b"),
        ("cannot share", r"\bi (?:cannot|can't|can not|am not able to|am unable to|am not allowed to|may not) "
                         r"(?:share|disclose|reveal|show you|give you access)\b"),
    ],
    "zh": [
        ("无法回答", r"(?:无法|不能|没法|难以)(?:回答|作答|解答)"),
        ("不知道", _NOT_ADDRESSED + r"不知道"),
        ("无法确定", r"(?:无法|不能|难以|没法)(?:确定|判断|得知|确认)"),
        ("抱歉", r"(?:抱歉|对不起)[^。!?]*?(?:无法|不能|没有|找不到|未能|不知道|不清楚|没法)"),
        ("无法找到", _NOT_ADDRESSED + r"(?:(?:无法|未能|没能|没有|未)找到|找不到)"),
        ("资料中没有", r"(?:资料|文档|文件|上下文|材料|知识库|内容|信息)(?:中|里)(?:并)?(?:没有|未|无)"),
        ("没有相关信息", r"没有(?:相关|有关|足够|具体|这方面|任何)?的?(?:信息|资料|记载)"),
        ("无相关", r"无(?:相关|有关)(?:信息|资料|内容|记载)?"),
        ("未提及", r"(?:未|并未|没有|并没有|没)(?:提及|提到|涉及|记载)"),
        ("不清楚", _NOT_ADDRESSED + r"不清楚"),
        ("不确定", _NOT_ADDRESSED + r"不确定(?!性)"),
        # declining for want of access; "如果您没有权限" is advice (the conditional), not a refusal
        ("无权查看", r"(?<!如果)(?<!若)(?<!如)无权(?:查看|访问|获取|阅读|查阅|知悉|了解|获知|浏览)"),
        ("没有权限", r"(?<!如果您)(?<!如果你)(?<!如果)(?<!若您)(?<!若)(?:没有|没|无|缺少|不具备)(?:相应的?|相关的?|足够的?)?"
                     r"(?:访问|查看|查阅|阅读)?(?:权限|授权)"),
        ("权限不足", r"权限不(?:足|够)"),
        ("不能透露", r"(?:无法|不能|不便|不可以)(?:透露|泄露|告知|分享|公开)"),
    ],
}
_COMPILED = {lang: [(label, re.compile(pattern)) for label, pattern in phrases] for lang, phrases in _PHRASES.items()}
_QUOTES = str.maketrans({"’": "'", "‘": "'", "ʼ": "'", "′": "'", "`": "'", "“": '"', "”": '"'})


def _normal_for_phrases(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).translate(_QUOTES).lower().split())


def refusal_phrase(answer: str | None, language: str | None) -> str | None:
    """Return the refusal phrase the answer opens with, or None when it reads as an answer.

    A refusal is a short answer (at most `MAX_REFUSAL_TOKENS` tokens of its language) whose first
    sentence holds a refusal phrase of either language; the phrase found earliest in it is returned.
    The sentence is NFKC normalised (full-width forms), its curly quotes made straight, lower-cased.
    A long answer, or one that says "not mentioned" only after it has answered, is an answer. A
    hedged answer whose first sentence holds a phrase ("I couldn't find the cause, but it is usually
    ...") reads as a refusal; a system that knows better sets its trace's ``refused`` flag.

    >>> refusal_phrase("Sorry, I don’t know.", "en"), refusal_phrase("抱歉，资料中没有提到这个错误码。", "zh")
    ("I don't know", '抱歉')
    >>> print(refusal_phrase("It expires after 24 hours. The cause is not mentioned in the context.", "en"))
    None

    Declining for want of access is a refusal too (the system should decline an item whose only
    evidence its asker may not see):

    >>> refusal_phrase("You do not have access to the salary bands.", "en"), refusal_phrase("您无权查看该文档。", "zh")
    ('you do not have access', '无权查看')
    """
    if not answer or not answer.strip():
        return None
    chinese = is_chinese(language)
    limit = MAX_REFUSAL_TOKENS["zh" if chinese else "en"]
    if len(cmrc_tokens(answer) if chinese else squad_normalize(answer).split()) > limit:
        return None
    spans = sentence_spans(answer)
    opening = _normal_for_phrases(answer[spans[0][0]:spans[0][1]] if spans else answer)
    found = []
    for lang in (("zh", "en") if chinese else ("en", "zh")):
        for label, pattern in _COMPILED[lang]:
            match = pattern.search(opening)
            if match:
                found.append((match.start(), label))
    return min(found)[1] if found else None


# -- the scorer's entry point -------------------------------------------------------------------------

def lexical_scores(answer: str | None, *, language: str | None, answers: Iterable[str], key_points: Iterable[str],
                   answerable: bool, known_ids: Iterable[str] | Container[str] = ()
                   ) -> tuple[dict[str, float], dict[str, str]]:
    """Return ({metric: value}, {metric: why unscored}) of the lexical metrics (`METRICS`) for one
    answer of an answerable item; both empty for an unanswerable one (its refusal is scored apart).

    `answers` are the item's accepted answers, `key_points` its key points' texts; inline citations
    of `known_ids` are removed from the answer first. None or an empty answer scores 0.

    >>> lexical_scores("24 hours [kb#1]", language="en", answers=["24 hours"], key_points=[], answerable=True,
    ...                known_ids={"kb#1"})
    ({'lexical/exact_match': 1.0, 'lexical/f1': 1.0}, {'lexical/key_point_coverage': 'no key points'})
    """
    if not answerable:
        return {}, {}
    text = answer or ""
    if text and known_ids:
        text = strip_markers(text, known_ids)
    answers, key_points = list(answers), list(key_points)
    values: dict[str, float] = {}
    unscored: dict[str, str] = {}
    em, best = exact_match(text, answers, language), f1(text, answers, language)
    if em is None:
        unscored["lexical/exact_match"] = unscored["lexical/f1"] = "no reference answer"
    else:
        values["lexical/exact_match"], values["lexical/f1"] = em, best
    coverage = key_point_token_coverage(text, key_points, language)
    if coverage is None:
        unscored["lexical/key_point_coverage"] = "no key points"
    else:
        values["lexical/key_point_coverage"] = coverage
    return values, unscored
