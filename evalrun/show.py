"""Terminal views of a run: the summary, and the items behind each failure attribution."""

from __future__ import annotations

import json
from pathlib import Path

from curate.display import console, table


def _fmt(summary: dict | None) -> tuple:
    if not summary:
        return ("", "", "")
    if summary["mean"] is None:
        return ("unscored", "", f"0 (+{sum(summary['unscored'].values())} unscored)")
    ci = summary["ci95"]
    unscored = sum(summary["unscored"].values())
    return (f"{summary['mean']:.3f}", f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "",
            f"{summary['n']}" + (f" (+{unscored} unscored)" if unscored else ""))


def print_summary(folder: Path) -> None:
    """Print the summary: what was unscored comes first, then the layers."""
    summary = json.loads((Path(folder) / "summary.json").read_text(encoding="utf-8"))
    out = console()
    run = summary["run"]
    first = f"{run['dataset']}@{run['version']} against {run['kb_snapshot']}: {summary['items']} items " \
            f"({summary['answerable']} answerable, {summary['unanswerable']} unanswerable); target {run['target']}"
    out.print(("DIAGNOSTIC RUN (oracle context) — " if run["diagnostic"] else "") + first)
    if summary["unscored_items"] or summary["problems"]:
        problems = ", ".join(f"{n} {k}" for k, n in summary["problems"].items())
        out.print(f"[bold]{summary['unscored_items']} items have unscored metrics[/bold]"
                  + (f"; problems: {problems}" if problems else ""))
    gate = summary["leakage_gate"]
    if gate["status"] != "clean":
        out.print(f"[bold]LEAKAGE UNCHECKED (--allow-unchecked): {gate['problem']}[/bold]")
    out.print(f"generation layer: {summary['layers']['generation']}")
    overall = summary["metrics"]["all"]
    names = sorted({n.split("/", 1)[1] for n in overall if n.startswith(("candidates/", "context/"))},
                   key=lambda n: (n.split("@")[0], int(n.split("@")[1]) if "@" in n else 0))
    rows = []
    for name in names:
        cand, ctx = overall.get(f"candidates/{name}"), overall.get(f"context/{name}")
        loss = summary["context_loss"].get(name)
        rows.append((name, *_fmt(cand), *_fmt(ctx), "" if loss is None else f"{loss:+.3f}"))
    out.print(table("retrieval (answerable items)", ("metric", "candidates", "95% CI", "n", "context", "95% CI", "n",
                                                     "lost"), rows))
    others = [(name, *_fmt(v)) for name, v in overall.items()
              if name.startswith(("unanswerable/", "generation/")) or name in ("success", "context/key_point_coverage")]
    out.print(table("other measures", ("metric", "mean", "95% CI", "n"), others))
    latency = summary["end_to_end"]["latency_ms"]
    if latency:
        out.print(table("latency (ms)", ("stage", "n", "p50", "p95", "max"),
                        [(stage, v["n"], v["p50"], v["p95"], v["max"]) for stage, v in latency.items() if v]))
    e2e = summary["end_to_end"]
    out.print(f"system tokens: {e2e['system_tokens']}; system cost: {e2e['system_cost']}")
    judge = summary.get("judge") or {}
    if judge.get("status") == "scored":
        out.print(f"judge (apart from the system): {judge['requests']} requests, {judge['cache_hits']} from cache, "
                  f"{judge['prompt_tokens']}+{judge['completion_tokens']} tokens, cost {judge['cost']}")
    attribution = summary["attribution"]
    out.print(table("failure attribution", ("attribution", "items"), sorted(attribution.items())) if attribution
              else "failure attribution: none")


def print_failures(folder: Path) -> None:
    """Print every item with a failure attribution or a problem, and why."""
    out = console()
    rows = []
    with open(Path(folder) / "scores.jsonl", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if row["attribution"] or row["problems"]:
                rows.append((row["item_id"], ", ".join(row["attribution"]), "; ".join(row["problems"])[:100]))
    out.print(table(f"{len(rows)} items with failures", ("item", "attribution", "problems"), rows))
