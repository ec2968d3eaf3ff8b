"""Fixtures of the production-failure tests: the handbook workspace with one more item (a Chinese
question whose paraphrase production fails on), and a production log full of planted personal data."""

import json
from pathlib import Path

import pytest

# Every piece of personal data the log plants, as written in it, and as digits alone where it is a number.
PLANTED = ["13812345678", "１３７１２３４５６７８", "13712345678", "+86 139 0000 1111", "13900001111", "010-62345678",
           "62345678", "+44 20 7946 0958", "79460958", "+1 415-555-2671", "4155552671", "zhang.san@example.com",
           "li.si@example.cn", "11010519491231002X", "110105 19491231 002X", "6217 0012 3456 7893",
           "6217001234567893", "6222-0212-3456-7890-128", "6222021234567890128", "192.168.31.7",
           "2001:db8::8a2e:370:7334", "ORD-55501234", "user-alice-8812", "user-bob-4471", "user-carol-9020"]

NOVEMBER = [
    # answered well: counted, never stored (personal data in them too)
    {"question": "升级需要多长时间？我的邮箱 li.si@example.cn", "feedback": "thumbs_up", "session_id": "user-carol-9020"},
    {"question": "Who can run the upgrade command?", "rating": 5},
    # hints alone are not failures
    {"question": "LG-4291 怎么办？电话 +86 139 0000 1111", "escalated": True, "rating": 4},
    {"question": "How do I rotate a key?", "follow_up": "and the old one?", "feedback": "thumbs_up"},
    # failures
    {"question": "LG-4031 是什么意思？", "feedback": "thumbs_down", "answer": "签名无效。",
     "retrieved_ids": ["errors.zh.md#1"], "session_id": "user-alice-8812"},                     # exact dup of t-1
    {"question": "请问LG-4031是什么意思呢", "rating": 1, "session_id": "user-bob-4471"},         # form dup of t-1
    {"question": "以仁王的父亲是谁？", "tags": ["wrong"]},                                        # semantic dup of s-1
    {"question": "升级网关要多久？我的手机13812345678", "feedback": "👎", "answer": "请拨打 010-62345678 咨询。",
     "retrieved_ids": ["upgrade.en.md#0", "no-such-chunk#9"], "session_id": "user-alice-8812", "escalated": True},
    {"question": "升级网关要多久？我的手机１３７１２３４５６７８", "feedback": "down",
     "session_id": "user-bob-4471"},                                                              # the same, once masked
    {"question": "默认限额为每个密钥每分钟600次请求？", "rating": 2},                            # in the KB: a leak
    {"question": "身份证 11010519491231002X 和 110105 19491231 002X 能注册两个账号吗？", "feedback": "bad"},
    {"question": "退款到卡 6217 0012 3456 7893 还是 6222-0212-3456-7890-128？", "rating": 1,
     "tags": ["wrong", "billing", "zhang.san@example.com"]},
    {"question": "Why is 192.168.31.7 blocked and not 2001:db8::8a2e:370:7334?", "feedback": "-1",
     "answer": "Call +44 20 7946 0958 or +1 415-555-2671.", "follow_up": True},
    {"question": "订单 ORD-55501234 的发票在哪里下载？", "rating": "1", "trace_id": "ORD-55501234"},
    {"question": "Does the gateway keep logs in UTC?", "feedback": "thumbs_down", "timestamp": "2026-10-31T23:59:00Z"},
]


def write_log(path: Path, rows: list[dict], month: str = "2026-11") -> Path:
    """Write rows as a JSONL production log, each with a timestamp in `month` unless it has its own."""
    with open(path, "w", encoding="utf-8") as handle:
        for n, row in enumerate(rows, start=1):
            handle.write(json.dumps({"timestamp": f"{month}-{n % 28 + 1:02d}T10:00:00+08:00", **row},
                                    ensure_ascii=False) + "\n")
    return path


@pytest.fixture
def production(handbook, tmp_path):
    """The handbook workspace (KB docs, dataset faq) with s-1 added, and November's log."""
    extra = tmp_path / "extra.jsonl"
    extra.write_text(json.dumps({"id": "s-1", "question": "以仁王是谁的儿子？", "answerable": False},
                                ensure_ascii=False) + "\n", encoding="utf-8")
    handbook("import", extra, "--dataset", "faq", "--source", "human")
    config = handbook.workspace.config_path
    config.write_text(config.read_text(encoding="utf-8") + '\n[failures.pii]\npatterns = { ORDER = "ORD-[0-9]{8}" }\n',
                      encoding="utf-8")
    (tmp_path / "logs").mkdir()
    return handbook, write_log(tmp_path / "logs" / "2026-11.jsonl", NOVEMBER)
