"""A scored run of faq@v1 whose funnel is known by hand, and a second run to compare it with; runs whose
retrieval a scripted judge graded (--judge-retrieval)."""

import json
import re

import pytest

from curate import DatasetStore
from evalrun.records import RunSettings
from evalrun.runner import run
from tests.evalrun.report import systems
from tests.support import targets
from tests.support.servers import ScriptedServer

LONG_ANSWER = "访问令牌已过期，需要重新登录。" * 300       # 4,500 characters: cut at 4,000


@pytest.fixture
def scripted_run(released, tmp_path):
    """faq@v1 run through `systems.scripted`, with K = 1, 5:

    - t-1 (zh): the gold chunks first in both layers, the first cited, a 4,500-character answer;
    - t-2: a distractor first, then the gold: in the candidates at K = 5 (not 1), not in the context;
    - t-3 (zh): only distractors: a retrieval miss at every K;
    - t-4: the gold first in the candidates, the context not reported;
    - t-5: unanswerable, refused.
    """
    workspace = released.workspace
    items = {item.id: item for item in DatasetStore(workspace).items("faq")}
    gold = {item_id: targets.GOLD[item.question] for item_id, item in items.items()}
    distractor = targets.DISTRACTOR
    assert distractor not in gold["t-2"] and distractor not in gold["t-3"]
    systems.SCRIPT.clear()
    systems.SCRIPT.update({
        items["t-1"].question: {"candidates": gold["t-1"] + [distractor], "context": gold["t-1"],
                                "citations": gold["t-1"][:1], "answer": LONG_ANSWER,
                                "latency_ms": {"retrieval": 4.0, "total": 30.0}},
        items["t-2"].question: {"candidates": [distractor] + gold["t-2"], "context": [distractor],
                                "answer": "It goes to 30 seconds.", "latency_ms": {"retrieval": 6.0, "total": 40.0}},
        items["t-3"].question: {"candidates": [distractor], "context": [distractor], "answer": "不知道多少次。"},
        items["t-4"].question: {"candidates": gold["t-4"] + [distractor], "answer": "Only administrators."},
        items["t-5"].question: {"candidates": [distractor], "context": [], "answer": None, "refused": True},
    })
    folder = run(workspace, ref="faq@v1", target="tests.evalrun.report.systems:scripted", out=tmp_path / "scripted",
                 settings=RunSettings(ks=[1, 5]))
    return released, folder


@pytest.fixture
def versus_run(scripted_run, tmp_path):
    """`scripted_run` as NEW against BASE `targets.perfect` (every gold chunk in the context, "an answer"):
    t-2 loses its gold from the context, t-3 misses it, t-4 stops reporting a context."""
    released, folder = scripted_run
    base = run(released.workspace, ref="faq@v1", target="tests.support.targets:perfect", out=tmp_path / "perfect",
               settings=RunSettings(ks=[1, 5]))
    return released, folder, base


HOSTILE_REASON = "<script>alert(1)</script> mentions upgrades"


def _grader(messages):
    """Grade 2 a passage naming LG-4031, and the distractor (upgrade.en.md#0, the first candidate of
    `targets.perfect` on every item, nobody's evidence: possibly missing evidence on every labelled item),
    giving it HOSTILE_REASON; 1 a passage about tokens; else 0. The generation layer's questions get no
    JSON (not what these tests are about)."""
    text = messages[-1]["content"]
    if "Passages:\n" not in text and "片段：\n" not in text:
        return "not json"
    body = text.split("Passages:\n" if "Passages:\n" in text else "片段：\n")[1].rsplit("\n\n", 1)[0]
    passages = re.findall(r"^\[(\d+)\] (.*?)(?=\n\n\[\d+\] |\Z)", body, flags=re.MULTILINE | re.DOTALL)
    grades = []
    for n, passage in passages:
        distractor = passage.startswith("# Upgrading Lumen Gateway")
        grade = 2 if distractor or "LG-4031" in passage else 1 if "token" in passage.lower() else 0
        reason = HOSTILE_REASON if distractor else f"graded {grade}"
        grades.append({"passage": int(n), "grade": grade, "reason": reason})
    return json.dumps({"grades": grades})


@pytest.fixture
def grader():
    server = ScriptedServer(_grader)
    yield server
    server.close()


def configure_judge(workspace, server):
    """Point the workspace's judge at `server` (model "judge")."""
    text = workspace.config_path.read_text(encoding="utf-8")
    text = text.replace('# base_url = "http://127.0.0.1:8080/v1"', f'base_url = "{server.base_url}"')
    text = text.replace('# model = "judge"', 'model = "judge"')
    workspace.config_path.write_text(text, encoding="utf-8")


@pytest.fixture
def judged_run(released, grader, tmp_path):
    """faq@v1 run through `targets.perfect` (the distractor first, then the gold; the gold is the context)
    with K = 1, 5 and --judge-retrieval, graded by `_grader`."""
    configure_judge(released.workspace, grader)
    folder = run(released.workspace, ref="faq@v1", target="tests.support.targets:perfect", out=tmp_path / "judged",
                 settings=RunSettings(ks=[1, 5], judge_retrieval=True))
    return released, folder
