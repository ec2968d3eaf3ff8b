"""The leakage benchmark's data: CMRC2018 read, then the KB chunks, filler, items and injected leaks built.

Imported by benchmarks/leakage.py, which runs and times the benchmark (see its docstring); nothing here is
timed. Built deterministically from the seeded rng it is given:
- KB (~100,000 chunks, one snapshot, `ChunkerSettings(kind="imported")`, no documents stored):
  * every real paragraph (dev + trial, 1,104) as one chunk in its own document;
  * filler chunks of ~150-250 characters, recombined from sentences of those paragraphs, 10 chunks per
    filler document with consecutive offsets (so the check's neighbour joining is exercised on them). Filler
    never holds a sentence that overlaps any answer span (every annotator's answer, located in its paragraph),
    nor a sentence holding a folded question: the only real copy of an item's evidence is its own paragraph,
    and no clean item's question or answer has a real copy anywhere in the KB. A clean item that is flagged is
    therefore a false positive of the check, not of the data;
  * leak documents (appended, their own documents, shuffled among the filler documents): a filler chunk,
    the chunk holding the leak (filler-like text around it), a filler chunk; `partial_copy` documents have the
    question cut in two across two consecutive chunks (offsets consecutive in one document).
- Items (5,000 EvalItems built directly): the 4,221 real questions (reference answer = first answer, evidence
  = the sentence(s) holding it, chunk_ids = [its paragraph's chunk]), plus 779 variants of real questions
  made by adding a polite prefix (请问 / 我想知道 / ...) with the same evidence and answer.
- Leaks: 10% of the items (500), one kind each, round-robin over six kinds, chosen among real questions of at
  least 6 folded characters (shorter ones are not checked by design) that have no alike question among the
  items (containment >= 0.85 either way; otherwise a leak of one would legitimately flag its twin):
  exact, width_punct (full-width letters/digits, other punctuation, spaces), words_inserted (1-3 words of
  1-4 characters, at most 25% of the folded length; an extra comma or word never inside a number or a Latin
  word: "20当时08年" is another number, which the check tells apart), partial_copy (cut at 25-75% of the question),
  qa_pair ("问：…答：…"), long_answer (reference answer replaced by the evidence sentence with its clauses
  reversed, >= 25 folded characters, containment in its own evidence < 0.95, i.e. not extractive; that answer
  is written into a new chunk).

Natural data (no injected leak but the controls; built without the rng):
- news (`natural_news`): 34 short news passages written for this benchmark (17 Chinese, 17 English), one
  chunk each, and 65 keyword queries over them (every word of a query stands in its own passage; some are a
  phrase of it, a headline line, or a phrase another passage shares). Five passages have an edition that
  differs only in a year (2023 -> 2024). Six of the queries are also written, as questions with their answers,
  into one FAQ document: the positive controls, which must be found there;
- scifact (`natural_scifact`, when <data>/scifact is present): every SciFact claim with cited abstracts
  (queries.jsonl metadata and qrels_test.tsv), against the 5,183 abstracts, one chunk each.
"""

import json
import random
import re
import unicodedata
from collections import Counter, defaultdict
from pathlib import Path

from curate.text.sentences import sentence_spans, trim_span
from curate.index.ngrams import NgramIndex
from curate.kb import sha256_text
from curate.records import Chunk, EvalItem, Evidence
from curate.text.containment import containment
from curate.text.normalize import fold

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = (REPO.parent / "shared" / "data",)
FILES = ("cmrc2018_dev.json", "cmrc2018_trial.json")
TARGET_CHUNKS = 100_000
TARGET_ITEMS = 5_000
LEAK_SHARE = 0.10
FILLER_PER_DOC = 10
KINDS = ("exact", "width_punct", "words_inserted", "partial_copy", "qa_pair", "long_answer")
PREFIXES = ("请问", "我想知道", "想问一下", "你知道", "能否告诉我")
INSERTS = ("的", "了", "呢", "那个", "其实", "究竟", "到底", "具体", "大概", "就是", "一下", "当时", "一般来说", "请问")
TWIN_MIN = 0.85


# -- data ------------------------------------------------------------------------------------------------

def find_data(given: str | None) -> Path | None:
    """Return the data folder: --data if given, else the first default that exists."""
    if given:
        return Path(given) if Path(given).is_dir() else None
    return next((path for path in DEFAULT_DATA if path.is_dir()), None)


def load_paragraphs(folder: Path) -> list[dict]:
    """Return CMRC2018 paragraphs {id, context, qas} from the dev and trial files found in `folder`."""
    paragraphs = []
    for name in FILES:
        path = folder / name
        if path.is_file():
            data = json.loads(path.read_text(encoding="utf-8"))["data"]
            paragraphs += [p for article in data for p in article["paragraphs"]]
        else:
            print(f"note: {path} not found; skipping it")
    return paragraphs


def locate(context: str, answer: str, start: int) -> tuple[int, int] | None:
    """Return the span of `answer` in `context`: at answer_start if it is there, else the nearest copy."""
    if context[start:start + len(answer)] == answer:
        return start, start + len(answer)
    places = [m.start() for m in re.finditer(re.escape(answer), context)] if answer else []
    if not places:
        return None
    best = min(places, key=lambda p: abs(p - start))
    return best, best + len(answer)


# -- leaks -----------------------------------------------------------------------------------------------

def full_width(char: str) -> str:
    """Return the full-width form of an ASCII letter or digit (other characters unchanged)."""
    return chr(ord(char) + 0xFEE0) if char.isascii() and char.isalnum() else char


PUNCT_SWAP = {"？": "?", "?": "？", "，": ",", ",": "，", "、": ",", "《": "<", "》": ">", "“": '"', "”": '"',
              "（": "(", "）": ")", "(": "（", ")": "）", "：": ":", "。": "."}


def _latin_or_digit(char: str) -> bool:
    char = unicodedata.normalize("NFKC", char)
    return char.isascii() and char.isalnum()


def between_tokens(text, at: int) -> int:
    """Return `at`, moved past the end of a number or Latin word it would cut: an insertion inside one
    writes another number or name ("20当时08年", "Sta一下m1na", "60, 3"), which the check rightly tells apart."""
    while 0 < at < len(text) and _latin_or_digit(text[at - 1]) and _latin_or_digit(text[at]):
        at += 1
    return at


def width_punct(question: str, rng: random.Random) -> str:
    """Full-width letters and digits, swapped punctuation, 1-3 spaces and one extra comma (never inside a number
    or a Latin word)."""
    chars = [PUNCT_SWAP.get(c, full_width(c)) for c in question]
    for _ in range(rng.randint(1, 3)):
        chars.insert(rng.randint(1, len(chars) - 1), " ")
    chars.insert(between_tokens(chars, rng.randint(1, len(chars) - 1)), rng.choice(("，", ", ", "、")))
    return "".join(chars)


def words_inserted(question: str, rng: random.Random) -> tuple[str, list[str]]:
    """Insert 1-3 short words (1-4 characters, <= 25% of the folded length in all) at random places (never inside
    a number or a Latin word)."""
    budget = len(fold(question)) // 4
    words = []
    for _ in range(rng.randint(1, 3)):
        fitting = [w for w in INSERTS if len(w) <= budget - sum(map(len, words))]
        if fitting:
            words.append(rng.choice(fitting))
    if not words:
        words = ["的"]  # never reached for questions of >= 6 folded characters (budget >= 1)
    text = question
    for word in words:
        at = between_tokens(text, rng.randint(1, len(text) - 1))
        text = text[:at] + word + text[at:]
    return text, words


def long_answer(evidence: str) -> str | None:
    """Return the evidence sentence with its clauses reversed (a paraphrase, not a copy), or None."""
    body = evidence.strip().rstrip("。！？!?；;")
    clauses = [c for c in re.split(r"[，,；;]", body) if c.strip()]
    if len(clauses) < 2:
        return None
    answer = "，".join(reversed(clauses)) + "。"
    if len(fold(answer)) < 25 or containment(fold(answer), fold(evidence))[0] >= 0.95:
        return None
    return answer


# -- building the benchmark ------------------------------------------------------------------------------

def make_chunk(chunk_id: str, doc_id: str, text: str, start: int | None, end: int | None) -> Chunk:
    """Return a Chunk of `doc_id` spanning [start, end), its text hashed."""
    return Chunk(chunk_id=chunk_id, doc_id=doc_id, text=text, start=start, end=end, text_sha256=sha256_text(text))


class Filler:
    """Draws filler texts of ~150-250 characters from a pool of sentences."""

    def __init__(self, pool: list[str], rng: random.Random):
        self.pool = pool
        self.rng = rng

    def text(self, low: int = 150, high: int = 250) -> str:
        """Return random pool sentences joined until a length drawn from [low, high] is reached (none past high + 10)."""
        target = self.rng.randint(low, high)
        parts, size = [], 0
        while size < target:
            sentence = self.rng.choice(self.pool)
            if parts and size + len(sentence) > high + 10:
                continue
            parts.append(sentence)
            size += len(sentence)
        return "".join(parts)

    def around(self, leak: str) -> str:
        """Return a filler-like text with `leak` between sentences, ~150-250 characters besides it."""
        before = self.text(60, 120)
        after = self.text(60, 120)
        return before + leak + after


def build(paragraphs: list[dict], rng: random.Random) -> dict:
    """Return the items (without snapshot id), chunks, leaks and counts of the benchmark."""
    counts = Counter()
    real = []          # dicts: id, question, answer, pid, ev_start, ev_end, evidence
    blocked = defaultdict(set)  # paragraph index -> sentence indexes not allowed in filler
    para_sentences = []
    for k, p in enumerate(paragraphs):
        context = p["context"]
        spans = sentence_spans(context)
        para_sentences.append(spans)
        for qa in p["qas"]:
            located = [locate(context, a["text"], a["answer_start"]) for a in qa["answers"]]
            for span in located:
                if span:
                    blocked[k] |= {i for i, (s, e) in enumerate(spans) if s < span[1] and e > span[0]}
            first = located[0] if located else None
            if first is None:
                counts["answers_not_located"] += 1
                ev_start, ev_end = 0, len(context)
            else:
                inside = [(s, e) for s, e in spans if s < first[1] and e > first[0]]
                ev_start, ev_end = inside[0][0], inside[-1][1]
            ev_start, ev_end = trim_span(context, ev_start, ev_end)
            real.append({"id": qa["id"], "question": qa["question"], "answer": qa["answers"][0]["text"],
                         "pid": p["id"], "ev_start": ev_start, "ev_end": ev_end,
                         "evidence": context[ev_start:ev_end]})
    counts["paragraphs"] = len(paragraphs)
    counts["real_questions"] = len(real)

    # filler pool: sentences that hold no answer and no folded question
    candidates = []
    for k, p in enumerate(paragraphs):
        for i, (s, e) in enumerate(para_sentences[k]):
            text = p["context"][s:e].strip()
            if i in blocked[k] or len(fold(text)) < 5 or len(text) > 200:
                continue
            candidates.append(text)
    folded_pool = [fold(t) for t in candidates]
    questions_folded = {fold(r["question"]) for r in real}
    blob = "\x00".join(folded_pool)
    holding = {q for q in questions_folded if len(q) >= 6 and q in blob}
    pool = [t for t, f in zip(candidates, folded_pool) if not any(q in f for q in holding)]
    counts["sentences_total"] = sum(len(s) for s in para_sentences)
    counts["sentences_blocked_answer"] = sum(len(b) for b in blocked.values())
    counts["sentences_dropped_question"] = len(candidates) - len(pool)
    counts["filler_pool_sentences"] = len(pool)
    filler = Filler(pool, rng)

    # items: all real questions plus variants to reach TARGET_ITEMS
    items = [dict(r, variant=False) for r in real]
    extra = TARGET_ITEMS - len(items)
    if extra > 0:
        for r in rng.sample(real, min(extra, len(real))):
            items.append(dict(r, id=r["id"] + "_V", question=rng.choice(PREFIXES) + r["question"], variant=True,
                              source_id=r["id"]))
    counts["variant_items"] = sum(1 for it in items if it["variant"])
    counts["items"] = len(items)

    # twins: questions alike enough that a leak of one could flag the other
    folded_q = [fold(it["question"]) for it in items]
    qindex = NgramIndex.build(folded_q)
    has_twin = set()
    for i, q in enumerate(folded_q):
        for j, _ in qindex.candidates(q, min_share=0.3, limit=20) if len(q) >= 4 else []:
            if j != i and (containment(q, folded_q[j])[0] >= TWIN_MIN or containment(folded_q[j], q)[0] >= TWIN_MIN):
                has_twin |= {i, j}
    varied = {it.get("source_id") for it in items if it["variant"]}
    eligible_q = [i for i, it in enumerate(items) if not it["variant"] and i not in has_twin
                  and it["id"] not in varied and len(folded_q[i]) >= 6]
    counts["items_with_alike_question"] = len(has_twin)
    counts["items_short_question"] = sum(1 for q in folded_q if len(q) < 6)

    # choose leaked items: round-robin kinds, long_answer among items whose evidence can be paraphrased
    n_leaks = round(LEAK_SHARE * len(items))
    per_kind = {kind: n_leaks // len(KINDS) + (1 if k < n_leaks % len(KINDS) else 0) for k, kind in enumerate(KINDS)}
    order = eligible_q[:]
    rng.shuffle(order)
    long_ok = [i for i in order if long_answer(items[i]["evidence"])]
    leaks = {}
    for i in long_ok[:per_kind["long_answer"]]:
        leaks[i] = "long_answer"
    rest = [i for i in order if i not in leaks]
    kinds = [kind for kind in KINDS if kind != "long_answer" for _ in range(per_kind[kind])]
    for i, kind in zip(rest, kinds):
        leaks[i] = kind
    counts["leaked_items"] = len(leaks)

    # leak documents
    leak_docs = []  # (doc_id, [texts], leak chunk indexes within the doc)
    leak_info = {}
    for n, (i, kind) in enumerate(sorted(leaks.items())):
        it = items[i]
        doc_id = f"leak-{n:04d}"
        q = it["question"]
        info = {"item": it["id"], "kind": kind, "doc_id": doc_id}
        if kind == "exact":
            texts, at = [filler.text(), filler.around(q), filler.text()], [1]
        elif kind == "width_punct":
            variant = width_punct(q, rng)
            texts, at = [filler.text(), filler.around(variant), filler.text()], [1]
            info["leak_text"] = variant
        elif kind == "words_inserted":
            variant, words = words_inserted(q, rng)
            texts, at = [filler.text(), filler.around(variant), filler.text()], [1]
            info["leak_text"], info["words"] = variant, words
        elif kind == "partial_copy":
            cut = rng.randint(max(1, round(0.25 * len(q))), max(1, round(0.75 * len(q))))
            texts = [filler.text(), filler.text(60, 120) + q[:cut], q[cut:] + filler.text(60, 120), filler.text()]
            at = [1, 2]
            info["cut"], info["leak_text"] = cut, f"{q[:cut]} | {q[cut:]}"
        elif kind == "qa_pair":
            faq = f"问：{q}\n答：{it['answer']}\n"
            texts, at = [filler.text(), filler.around(faq), filler.text()], [1]
            info["leak_text"] = faq
        else:
            answer = long_answer(it["evidence"])
            it["answer"] = answer
            texts, at = [filler.text(), filler.around(answer), filler.text()], [1]
            info["leak_text"] = answer
        info["chunk_ids"] = [f"{doc_id}#{k}" for k in at]
        leak_info[it["id"]] = info
        leak_docs.append((doc_id, texts))

    # chunks: paragraphs, then filler documents with leak documents shuffled in
    chunks = [make_chunk(f"{p['id']}#0", p["id"], p["context"], 0, len(p["context"])) for p in paragraphs]
    leak_chunk_count = sum(len(t) for _, t in leak_docs)
    n_filler = TARGET_CHUNKS - len(chunks) - leak_chunk_count
    filler_docs = []
    for d in range((n_filler + FILLER_PER_DOC - 1) // FILLER_PER_DOC):
        size = min(FILLER_PER_DOC, n_filler - d * FILLER_PER_DOC)
        filler_docs.append((f"filler-{d:05d}", [filler.text() for _ in range(size)]))
    slots = sorted(rng.sample(range(len(filler_docs) + len(leak_docs)), len(leak_docs)))
    docs, leak_iter, filler_iter = [], iter(leak_docs), iter(filler_docs)
    slot_set = set(slots)
    for s in range(len(filler_docs) + len(leak_docs)):
        docs.append(next(leak_iter) if s in slot_set else next(filler_iter))
    for doc_id, texts in docs:
        offset = 0
        for k, text in enumerate(texts):
            chunks.append(make_chunk(f"{doc_id}#{k}", doc_id, text, offset, offset + len(text)))
            offset += len(text)
    counts["chunks"] = len(chunks)
    counts["paragraph_chunks"] = len(paragraphs)
    counts["filler_chunks"] = n_filler
    counts["filler_documents"] = len(filler_docs)
    counts["leak_chunks"] = leak_chunk_count
    counts["leak_documents"] = len(leak_docs)
    counts["mean_chunk_chars"] = round(sum(len(c.text) for c in chunks) / len(chunks), 1)
    return {"items": items, "chunks": chunks, "leaks": leak_info, "counts": dict(counts), "per_kind": per_kind}


def eval_items(raw: list[dict], snapshot_id: str) -> list[EvalItem]:
    """Return EvalItems for the benchmark's items, evidence mapped to the paragraph chunks of `snapshot_id`."""
    return [EvalItem(id=r["id"], question=r["question"], reference_answer=r["answer"], language="zh",
                     source="human", kb_snapshot=snapshot_id,
                     evidence=[Evidence(evidence_id="e1", doc_id=r["pid"], start=r["ev_start"], end=r["ev_end"],
                                        text=r["evidence"], chunk_ids=[f"{r['pid']}#0"], kb_snapshot=snapshot_id)])
            for r in raw]


# -- natural data: keyword queries over news passages (written for this benchmark) ------------------------

# (passage id, language, text, (year, other year) for an edition that differs only in that year, queries).
# Every word of a keyword query stands in its own passage (checked by `natural_news`); some queries are a
# phrase of the passage, a headline line, or a phrase that other passages share.
NEWS = [
    ("zh-bridge", "zh", "港珠澳大桥于2018年10月23日举行开通仪式，次日上午9时正式通车。大桥全长55公里，集桥、岛、隧于一体，"
     "是世界最长的跨海大桥。", None,
     [("港珠澳大桥 开通仪式", "2018年10月23日"), ("跨海大桥 全长", "55公里")]),
    ("zh-grain", "zh", "国家统计局公布，2023年全国粮食总产量13908亿斤，比上年增加178亿斤，增长1.3%，粮食产量连续9年稳定在"
     "1.3万亿斤以上。", ("2023", "2024"),
     [("全国粮食总产量", "13908亿斤"), ("2023年 粮食产量 增长", "1.3%")]),
    ("zh-rrr", "zh", "中国人民银行宣布，自2月5日起下调金融机构存款准备金率0.5个百分点，此次降准预计释放长期资金约1万亿元。",
     None, [("降准 0.5个百分点", "2月5日"), ("存款准备金率 下调", "0.5个百分点")]),
    ("zh-rail", "zh", "2022年全国铁路完成旅客发送量16.1亿人次，国家铁路完成货物发送量39亿吨，铁路营业里程达到15.5万公里，"
     "其中高铁4.2万公里。", ("2022", "2023"),
     [("铁路营业里程", "15.5万公里"), ("高铁 2022 里程", "4.2万公里")]),
    ("zh-shenzhou", "zh", "神舟十七号载人飞船于10月26日11时14分在酒泉卫星发射中心发射升空，航天员汤洪波、唐胜杰、江新林"
     "将在空间站驻留约6个月。", None,
     [("神舟十七号 发射", "10月26日"), ("空间站 驻留 航天员", "约6个月")]),
    ("zh-boxoffice", "zh", "春节档电影票房创下历史新高，截至2月17日24时，档期总票房达到80.16亿元，观影人次1.63亿。", None,
     [("春节档 票房", "80.16亿元"), ("观影人次", "1.63亿")]),
    ("zh-ev", "zh", "中国汽车工业协会数据显示，2023年新能源汽车销量达到949.5万辆，同比增长37.9%，市场占有率达到31.6%。",
     ("2023", "2024"), [("新能源汽车销量", "949.5万辆"), ("新能源汽车 市场占有率", "31.6%")]),
    ("zh-cold", "zh", "受强冷空气影响，北京今天最低气温降至零下15℃，市气象台发布寒潮蓝色预警，提醒市民注意防寒保暖。", None,
     [("北京 寒潮 预警", "蓝色预警"), ("最低气温 零下15℃", "零下15℃")]),
    ("zh-asiad", "zh", "杭州第19届亚运会于9月23日开幕，中国代表团共获得201枚金牌，位列金牌榜首位。", None,
     [("杭州 亚运会 金牌", "201枚"), ("亚运会 9月23日 开幕", "9月23日")]),
    ("zh-metro", "zh", "深圳地铁14号线开通\n深圳地铁14号线于10月28日开通运营，线路全长50.3公里，设站18座，连接福田中心区与"
     "坪山。", None, [("深圳地铁14号线开通", "10月28日"), ("14号线 全长 设站", "18座")]),
    ("zh-chip", "zh", "华为发布新一代麒麟芯片，采用自研架构，搭载于Mate 60系列手机，首批产品上市后迅速售罄。", None,
     [("麒麟芯片 Mate 60", "Mate 60系列"), ("华为 新一代 芯片", "麒麟芯片")]),
    ("zh-csharp", "zh", "微软发布C# 12和.NET 8，新版本提升了运行性能，并改进了对云原生应用的支持。", None,
     [("C# 12 .NET 8", "C# 12"), ("云原生应用 支持", "改进")]),
    ("zh-clang", "zh", "该校开设C语言程序设计课程，每周4学时，期末采用上机考试。", None,
     [("C语言 程序设计 课程", "每周4学时")]),
    ("zh-stocks", "zh", "沪深两市成交额连续第三个交易日突破1万亿元，上证指数收涨1.2%，创业板指上涨2.5%。", None,
     [("沪深两市 成交额 1万亿元", "1万亿元"), ("上证指数 收涨", "1.2%")]),
    ("zh-business", "zh", "据新华社报道，国务院常务会议研究部署进一步优化营商环境的政策措施，要求减少企业办事环节。", None,
     [("优化营商环境 政策措施", "减少企业办事环节"), ("优化营商环境", "国务院常务会议")]),
    ("zh-business-2", "zh", "多地出台举措落实国务院常务会议精神，进一步优化营商环境，推动政务服务一网通办。", None,
     [("政务服务 一网通办", "多地出台举措")]),
    ("zh-fuel", "zh", "国家发展改革委宣布，自今日24时起国内汽、柴油价格每吨分别下调205元和195元。", None,
     [("汽 柴油价格 下调", "每吨205元和195元"), ("发展改革委 柴油 下调", "195元")]),
    ("en-fed", "en", "The Federal Reserve raised interest rates by a quarter point in July 2023, lifting its benchmark to a "
     "range of 5.25% to 5.5%, the highest level in 22 years.", ("2023", "2024"),
     [("Federal Reserve raised interest rates", "a quarter point"), ("benchmark rate highest level", "22 years")]),
    ("en-apple", "en", "Apple reported iPhone revenue of $69.7 billion for the holiday quarter of 2023, up 6% from a year "
     "earlier, while services revenue reached a record $23.1 billion.", ("2023", "2024"),
     [("Apple iPhone revenue holiday quarter", "$69.7 billion"), ("services revenue record", "$23.1 billion")]),
    ("en-bridge", "en", "The Gordie Howe International Bridge between Detroit and Windsor is expected to open in 2025. At 853 "
     "metres, its main span will be the longest of any cable-stayed bridge in North America.", None,
     [("Gordie Howe bridge open", "2025"), ("longest cable-stayed bridge North America", "853 metres")]),
    ("en-election", "en", "UK general election 2024\nVoters in the United Kingdom went to the polls on 4 July 2024. The Labour "
     "Party won 411 seats, a majority of 174.", None,
     [("UK general election 2024", "4 July 2024"), ("Labour Party seats majority", "411 seats")]),
    ("en-climate", "en", "Global average temperatures in 2023 were 1.45 degrees Celsius above pre-industrial levels, making "
     "it the warmest year on record, the World Meteorological Organization said.", None,
     [("warmest year on record", "2023"), ("global temperature pre-industrial levels", "1.45 degrees Celsius")]),
    ("en-starship", "en", "SpaceX launched its Starship rocket on a second test flight from Boca Chica, Texas, in November. "
     "The vehicle reached space before contact was lost.", None,
     [("SpaceX Starship test flight", "November"), ("Starship reached space", "before contact was lost")]),
    ("en-oil", "en", "Brent crude futures fell 2% to $77.04 a barrel on Tuesday after OPEC+ agreed to extend output cuts "
     "into next year.", None, [("Brent crude futures barrel", "$77.04"), ("OPEC+ output cuts", "into next year")]),
    ("en-python", "en", "Python 3.12 was released in October with faster startup, better error messages and a new syntax "
     "for type parameters.", None,
     [("Python 3.12 released", "October"), ("Python error messages type parameters", "better error messages")]),
    ("en-cpp", "en", "The survey found C++ remains the most used language for game engines, while C is still preferred "
     "for embedded systems.", None, [("C++ game engines", "the most used language"), ("C embedded systems", "C")]),
    ("en-housing", "en", "Home prices in London fell 3.7% in the year to December, the biggest annual drop since 2009, "
     "according to the Office for National Statistics.", None,
     [("London home prices fell", "3.7%"), ("home prices biggest annual drop since 2009", "3.7%")]),
    ("en-wildfire", "en", "Wildfires in Canada burned a record 18.5 million hectares in 2023, forcing more than 230,000 "
     "people to evacuate.", None,
     [("Canada wildfires 2023 hectares", "18.5 million hectares"), ("wildfires people evacuate", "230,000")]),
    ("en-nvidia", "en", "Nvidia said revenue for its data centre business tripled to $14.5 billion in the third quarter, "
     "driven by demand for its AI chips.", None,
     [("Nvidia data centre revenue", "$14.5 billion"), ("AI chips demand Nvidia", "tripled")]),
    ("en-strike", "en", "Hollywood writers ended their 148-day strike after reaching a deal with studios on pay and the "
     "use of artificial intelligence.", None,
     [("Hollywood writers strike ended", "148 days"), ("writers deal artificial intelligence", "pay and AI use")]),
    ("en-inflation", "en", "The central bank said inflation was falling faster than expected and signalled that rate cuts "
     "could come next year.", None,
     [("inflation falling faster than expected", "rate cuts next year"), ("central bank rate cuts", "next year")]),
    ("en-inflation-2", "en", "Markets rallied after the central bank said inflation was falling faster than expected, "
     "and government bond yields dropped.", None, [("markets rallied bond yields", "dropped")]),
    ("en-railway", "en", "The Elizabeth line carried 200 million passengers in its first year, making it the busiest "
     "railway in the UK, Transport for London said.", None,
     [("Elizabeth line passengers first year", "200 million"), ("busiest railway UK", "the Elizabeth line")]),
    ("en-vaccine", "en", "Regulators approved an updated Covid-19 vaccine targeting the XBB.1.5 variant for people aged "
     "6 months and older.", None,
     [("updated Covid-19 vaccine XBB.1.5", "approved"), ("vaccine approved 6 months", "aged 6 months and older")]),
]
# Positive controls: the same keyword queries written into an FAQ document as questions, with their answers.
NEWS_FAQ = ("zh-grain#1", "zh-ev#0", "zh-metro#0", "en-fed#0", "en-cpp#0", "en-election#0")


def natural_news(snapshot_id: str | None = None) -> dict:
    """Return the news case: chunks (one per passage and edition, plus an FAQ of control questions),
    items (one per keyword query, its passage as evidence), the editions and the FAQ control items."""
    chunks, items, editions = [], [], {}
    for pid, language, text, year_copy, queries in NEWS:
        chunks.append(make_chunk(f"{pid}#0", pid, text, 0, len(text)))
        if year_copy:
            old, new = year_copy
            edition = text.replace(old, new)
            chunks.append(make_chunk(f"{pid}-{new}#0", f"{pid}-{new}", edition, 0, len(edition)))
            editions[pid] = f"{pid}-{new}#0"
        for n, (query, answer) in enumerate(queries):
            missing = [w for w in query.split() if fold(w) not in fold(text)]
            if missing:
                raise ValueError(f"{pid}: query {query!r} has words not in its passage: {missing}")
            items.append(EvalItem(id=f"{pid}#{n}", question=query, reference_answer=answer, language=language,
                                  source="human", kb_snapshot=snapshot_id,
                                  evidence=[Evidence(evidence_id="e1", doc_id=pid, start=0, end=len(text), text=text,
                                                     chunk_ids=[f"{pid}#0"], kb_snapshot=snapshot_id)]))
    by_id = {item.id: item for item in items}
    faq = "".join((f"问：{by_id[i].question}？\n答：{by_id[i].reference_answer}\n\n" if by_id[i].language == "zh" else
                   f"Q: {by_id[i].question}?\nA: {by_id[i].reference_answer}\n\n") for i in NEWS_FAQ)
    chunks.append(make_chunk("support-faq#0", "support-faq", faq, 0, len(faq)))
    return {"chunks": chunks, "items": items, "editions": editions, "faq_items": list(NEWS_FAQ)}


def natural_scifact(folder: Path, snapshot_id: str | None = None) -> dict | None:
    """Return the SciFact case (claims against their cited abstracts, one chunk per abstract), or None
    when `folder` lacks corpus.jsonl or queries.jsonl."""
    corpus, queries = folder / "corpus.jsonl", folder / "queries.jsonl"
    if not (corpus.is_file() and queries.is_file()):
        return None
    chunks = {}
    for line in corpus.read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        chunks[doc["_id"]] = make_chunk(doc["_id"], doc["_id"], doc["text"], 0, len(doc["text"]))
    cited = defaultdict(set)
    qrels = folder / "qrels_test.tsv"
    if qrels.is_file():
        for line in qrels.read_text(encoding="utf-8").splitlines()[1:]:
            query_id, doc_id, _ = line.split("\t")
            cited[query_id].add(doc_id)
    items = []
    for line in queries.read_text(encoding="utf-8").splitlines():
        query = json.loads(line)
        docs = sorted((set(query.get("metadata") or {}) | cited[query["_id"]]) & set(chunks))
        if docs:
            items.append(EvalItem(id=f"scifact-{query['_id']}", question=query["text"], language="en", source="human",
                                  kb_snapshot=snapshot_id,
                                  evidence=[Evidence(evidence_id=f"e{k}", doc_id=d, start=0, end=len(chunks[d].text),
                                                     text=chunks[d].text, chunk_ids=[d], kb_snapshot=snapshot_id)
                                            for k, d in enumerate(docs, start=1)]))
    return {"chunks": list(chunks.values()), "items": items}
