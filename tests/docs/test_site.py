"""The docs site builds strictly (no broken link, no missing page, no unknown anchor), and its
generated reference pages are the code as it is: every file format from the records, every record
on the page."""

from __future__ import annotations

import os
import subprocess
import sys

from cogapp import Cog
from pydantic import BaseModel

from tests.support.docs import ROOT

FORMATS = ROOT / "docs" / "reference" / "formats.md"


def test_the_site_builds_strictly(tmp_path):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    site = tmp_path / "site"
    for page in ("index.html", "tutorials/first-release.html", "reference/formats.html", "reference/metrics.html",
                 "reference/python.html", "cli.html"):
        assert (site / page).is_file(), page
    metrics = (site / "reference" / "metrics.html").read_text(encoding="utf-8")
    # the metrics' docstrings are rendered, their doctests shown as code, not read as Markdown
    assert "Recall@K = |R ∩ S_K| / |R|" in metrics and "ndcg" in metrics
    assert '<span class="gp">&gt;&gt;&gt; </span>' in metrics and "<blockquote>" not in metrics
    # nothing the pages need is fetched from the web: no web font, no CDN script
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "fonts.googleapis" not in index and "cdn." not in index


def test_the_file_formats_page_is_generated_from_the_records_as_they_are():
    assert Cog().main(["cog", "--check", str(FORMATS)]) == 0, "docs/reference/formats.md is stale: run `make docs`"


def test_the_growth_curve_of_large_kbs_is_the_figures_the_benchmarks_saved():
    scale = FORMATS.parent.parent / "how-to" / "scale.md"
    assert Cog().main(["cog", "--check", str(scale)]) == 0, "docs/how-to/scale.md is stale: run `make docs`"
    text = scale.read_text(encoding="utf-8")
    assert "| leakage, warm | " in text and "**1,000,000 chunks**" in text


def test_every_record_on_disk_is_documented():
    import curate.records
    from evalrun import records as run_records
    sys.path.insert(0, str(FORMATS.parent))
    try:
        from records_markdown import documented
    finally:
        sys.path.remove(str(FORMATS.parent))
    on_disk = {obj for module in (curate.records, run_records) for obj in vars(module).values()
               if isinstance(obj, type) and issubclass(obj, curate.records.VersionedRecord)
               and obj not in (curate.records.VersionedRecord, curate.records.CheckRecord)}  # bases of others
    missing = sorted(model.__name__ for model in on_disk - documented())
    assert missing == [], f"records with no place in docs/reference/formats.md: {missing}"
    text = FORMATS.read_text(encoding="utf-8")
    for model in documented():
        assert f"### {model.__name__}\n" in text
        for name, info in model.model_fields.items():
            assert f"| `{name}` |" in text, f"{model.__name__}.{name}"
            if issubclass(model, BaseModel) and info.description:
                assert " ".join(info.description.split())[:40].replace("|", "\\|") in text


def test_doctest_examples_are_fenced_as_code_and_the_rest_left_alone():
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        from griffe_doctests import fence_doctests
    finally:
        sys.path.remove(str(ROOT / "docs"))
    text = "Return x.\n\n    >>> f([1][0])\n    1\n\nThen prose, [a][b] kept."
    assert fence_doctests(text) == "Return x.\n\n    ```pycon\n    >>> f([1][0])\n    1\n    ```\n\nThen prose, [a][b] kept."
    assert fence_doctests("no examples") == "no examples"
