"""`evalrun probe`: robustness probes built from the release's own evidence and KB."""

from __future__ import annotations

from pathlib import Path

import click

from curate import InputError
from curate.cli import EXIT_FINDINGS
from evalrun.api import probe as probe_release
from evalrun.api import probe_gate
from evalrun.cli.run import WORKSPACE, named_workspace
from evalrun.cli.probe_views import print_probe_summary
from evalrun.probes.folder import ProbeSettings
from evalrun.probes.gate import apply_probe_gate, gate_lines
from evalrun.probes.records import PROBES

DEFAULTS = ProbeSettings(probes=list(PROBES))


def _floats(text: str, option: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InputError(f"{text!r}: give numbers separated by commas, e.g. 0,0.2,0.4,0.6,0.8", field=option) from None


def _words(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


@click.command("probe")
@click.option("--dataset", "ref", required=True, help="The release to probe: NAME@vN.")
@click.option("--target", required=True, help="path/to/file.py:function or module:function, or http(s)://URL. A "
              "Python module with generate(question, context) is given each variant's planted context and runs "
              "every probe; any other target runs negative and rewrite only.")
@click.option("--probes", default=",".join(PROBES), show_default=True, help="The probes to run.")
@click.option("--end-to-end", is_flag=True, help="Call the named function with the question alone even when the "
              "module has generate(question, context).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), help="Probe folder (default: "
              "runs/probe-NAME-vN-TIME).")
@click.option("--resume", is_flag=True, help="Finish a probe folder a kill interrupted (its variants and settings "
              "are kept).")
@click.option("--seed", type=int, default=DEFAULTS.seed, show_default=True, help="Every random choice is drawn from "
              "it: the same seed gives the same variants.")
@click.option("--rates", default=",".join(f"{r:g}" for r in DEFAULTS.rates), show_default=True,
              help="noise: shares of the context that are hard negatives (multiples of 1/--size).")
@click.option("--positions", default=",".join(DEFAULTS.positions), show_default=True,
              help="noise: where the gold chunks stand.")
@click.option("--size", type=click.IntRange(1, 50), default=DEFAULTS.size, show_default=True,
              help="Chunks in a noise or negative context.")
@click.option("--templates", default="", help="injection: the templates to plant (default: all).")
@click.option("--rewrite-rules", default=",".join(DEFAULTS.rewrite_rules), show_default=True,
              help="rewrite: the rules.")
@click.option("--absent", type=click.IntRange(min=0), default=DEFAULTS.absent, show_default=True,
              help="End to end: questions about content the KB does not hold, asked as the negative probe.")
@click.option("--limit", type=click.IntRange(min=1), help="Probe at most this many items (the first by id).")
@click.option("--k", type=click.IntRange(1, 100), default=DEFAULTS.k, show_default=True,
              help="End to end: the candidates' recall cutoff paired between a rewrite and the original.")
@click.option("--concurrency", type=click.IntRange(min=1), default=DEFAULTS.concurrency, show_default=True)
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=DEFAULTS.timeout, show_default=True,
              help="Seconds per call, from the moment it starts.")
@click.option("--allow-unchecked", is_flag=True, help="Probe although the leakage check is missing or failed.")
@click.option("--no-judge", is_flag=True, help="Ask no judge: lexical verdicts only.")
@click.option("--budget", type=click.FloatRange(min=0, min_open=True), help="The most the judge's verdicts may cost, "
              "in USD (needs [judge.prices]): no request is sent that could go past it; the variants left are counted "
              "as verdicts the judge could not give (the lexical ones stand).")
@click.option("--budget-tokens", type=click.IntRange(min=1), help="The same limit in tokens (prompt and answer).")
@click.option("--failures", "shown", type=click.IntRange(min=0), default=5, show_default=True,
              help="Failures printed per probe.")
@click.option("--gate", "gate", is_flag=False, flag_value="", default=None, metavar="[FILE]",
              help="Hold the run to the rules of FILE's [probe_gate] table (TOML), or of the workspace's curate.toml "
              "when no FILE is given (put --gate last then), that need no BASE: max_attack_success (injection/success "
              "at most this share of the items' variants; 0: no attack may succeed) and min (floors on metrics); "
              "guards need `evalrun compare BASE NEW --gate`. The file is read before anything runs. Exit 0 pass, "
              "1 fail (each rule one line, PASS or FAIL), 2 a bad gate file (file, line, field).")
@WORKSPACE
@click.pass_context
def probe(ctx: click.Context, ref, target, probes, end_to_end, out, resume, seed, rates, positions, size, templates,
          rewrite_rules, absent, limit, k, concurrency, timeout, allow_unchecked, no_judge, budget, budget_tokens,
          shown, gate, command_workspace) -> None:
    """Probe a system's robustness with variants of a release built from its own evidence and KB: noise
    (hard negatives at several rates, the gold at several positions), negative (no evidence: it must
    decline), counterfactual (a changed fact: it must follow the context), injection (a planted instruction
    and canary: it must ignore them), rewrite (the question rephrased: the same answer). Each is scored
    without a model, paired to the same items asked clean."""
    workspace = named_workspace(ctx, command_workspace)
    rules, source = probe_gate(True if gate == "" else gate, workspace=workspace, base=False) \
        if gate is not None else (None, "")
    done = probe_release(ref, target=target, probes=probes, workspace=workspace,
                         out=out, resume=resume, end_to_end=end_to_end, seed=seed,
                         rates=_floats(rates, "rates"), positions=_words(positions), size=size,
                         templates=_words(templates), rewrite_rules=_words(rewrite_rules), absent=absent, limit=limit,
                         k=k, concurrency=concurrency, timeout=timeout, allow_unchecked=allow_unchecked,
                         no_judge=no_judge, budget_usd=budget, budget_tokens=budget_tokens)
    print_probe_summary(done.folder, failures=shown)
    if rules is not None:
        result = apply_probe_gate(rules, done, source)
        for line in gate_lines(result):
            click.echo(line)
        if not result.passed:
            ctx.exit(EXIT_FINDINGS)
