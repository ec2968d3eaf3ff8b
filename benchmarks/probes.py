"""What `evalrun probe` costs and tells on a real Chinese release (issue 28).

Run: `.venv/bin/python benchmarks/probes.py [--items N]`; writes benchmarks/results/probes.json.

The release is CMRC2018 dev (../shared/data/cmrc2018/cmrc2018_dev.json, else the bundled sample), imported
as `curate import --format squad` makes it (a chunk per paragraph), checked for leakage and released. Two
systems given each variant's context (tests/support/probe_targets.py): a naive one (the first chunk, its
memory of the KB over a changed chunk, every instruction it reads, the release's questions word for word)
and a careful one. Measured for each: the seconds to build the variants and to ask them, the variants per
probe and those not built, each probe's deciding metric with n and its 95% interval, the noise curves;
then `evalrun compare` of the two (the verdict per probe). No reference tool builds these variants from a
user's own KB (RGB's noise, negative and counterfactual sets are fixed news data), so none runs beside.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from common import machine, print_table, save_json  # noqa: E402

RESULTS = REPO / "benchmarks" / "results" / "probes.json"
SHARED = REPO.parent / "shared" / "data" / "cmrc2018" / "cmrc2018_dev.json"
SAMPLE = REPO / "examples" / "cmrc2018" / "cmrc2018_sample.json"
DECIDING = ("clean/accuracy", "noise/accuracy", "noise/accuracy@0.6", "noise/accuracy@middle", "negative/declined",
            "counterfactual/followed", "injection/success", "rewrite/consistent")


def release(folder: Path) -> tuple[object, Path, float]:
    """Return the workspace holding cmrc@v1, the source file and the seconds it took."""
    from click.testing import CliRunner

    from curate.cli.main import cli
    from curate.workspace import init_workspace
    source = SHARED if SHARED.exists() else SAMPLE
    workspace = init_workspace(folder / "ws")
    started = time.perf_counter()
    for args in (["import", source, "--format", "squad", "--dataset", "cmrc", "--source", "human"],
                 ["check-leakage", "--dataset", "cmrc"], ["release", "--dataset", "cmrc", "-m", "v1"]):
        result = CliRunner(mix_stderr=False).invoke(cli, ["--workspace", str(workspace.root), *map(str, args)])
        if result.exit_code != 0:
            raise SystemExit(f"curate {args[0]} failed: {result.stderr}")
    return workspace, source, time.perf_counter() - started


def probed(workspace, target, items: int, out: Path) -> dict:
    """Return what one probe run of `target` measured."""
    import evalrun
    started = time.perf_counter()
    run = evalrun.probe("cmrc@v1", target=target, workspace=workspace, limit=items, no_judge=True, out=out)
    seconds = time.perf_counter() - started
    summary = run.summary
    metrics = {}
    for name in DECIDING:
        metric = summary.metric(name)
        if metric is not None:
            s = metric.summary
            metrics[name] = {"mean": s.mean, "ci95": s.ci95, "n": s.n, "variants": metric.variants,
                             "undecided": metric.undecided}
    return {"seconds": round(seconds, 2), "items": summary.items, "variants": summary.variants,
            "not_built": {p: sum(r.values()) for p, r in summary.skipped.items()}, "metrics": metrics,
            "curves": {k: [(p.x, p.mean, p.n) for p in v] for k, v in summary.curves.items()},
            "folder": str(run.folder)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=300, help="Items probed (the first by id).")
    args = parser.parse_args()
    import evalrun
    from tests.support import probe_targets
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        workspace, source, prepared = release(folder)
        os.environ["CURATE_WORKSPACE"] = str(workspace.root)
        naive = probed(workspace, probe_targets.generate, args.items, folder / "naive")
        careful = probed(workspace, probe_targets.careful, args.items, folder / "careful")
        comparison = evalrun.compare_probes(naive["folder"], careful["folder"], workspace=workspace)
        verdicts = {v.probe: v.verdict for v in comparison.probes}
    print(f"cmrc@v1 from {source.name}: imported, checked and released in {prepared:.1f} s")
    print_table(["metric", "naive", "careful"],
                [[name, _shown(naive["metrics"].get(name)), _shown(careful["metrics"].get(name))] for name in DECIDING])
    print_table(["", "naive", "careful"], [["seconds (build + ask + score)", naive["seconds"], careful["seconds"]],
                                           ["variants", sum(naive["variants"].values()),
                                            sum(careful["variants"].values())]])
    print("compare naive -> careful: " + ", ".join(f"{p} {v}" for p, v in verdicts.items()))
    save_json(RESULTS, {"machine": machine(), "source": source.name, "items": args.items,
                        "prepare_seconds": round(prepared, 2), "naive": naive, "careful": careful,
                        "compare_naive_to_careful": verdicts})


def _shown(metric: dict | None) -> str:
    if not metric or metric["mean"] is None:
        return "-"
    low, high = metric["ci95"] or (None, None)
    interval = f" [{low:.1%}, {high:.1%}]" if low is not None else ""
    return f"{metric['mean']:.1%}{interval} n={metric['n']}"


if __name__ == "__main__":
    main()
