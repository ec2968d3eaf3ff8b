"""`evalrun rejudge RUN --out NEW`: the frozen answers of a run judged again by another judge, into a new
scored run, without calling the system.

The new folder holds the run's manifest (its judge and prompt versions replaced, `rejudged_from` naming
the run), a byte copy of its traces, and scores from the other judge. Comparing the two runs shows what
changing the judge alone does; `evalrun calibrate` of either with reviews says how far each agrees with
people. Killed half way, the same command finishes it (the judge's answers are cached).
"""

from __future__ import annotations

from pathlib import Path

from curate import InputError, JudgeConfig, Workspace, atomic_write_bytes, now, resolve_judge, writing
from evalrun.records import MANIFEST, TRACES, RunManifest, read_run, scored_run
from evalrun.scoring import score_run
from evalrun.scoring.generation_prompts import GENERATION


def rejudge(workspace: Workspace, folder: Path, out: Path, *, base_url: str | None = None, model: str | None = None,
            api_key_env: str | None = None) -> Path:
    """Score the answers of the run in `folder` again with another judge (flags over the environment over
    curate.toml, as every judge setting), into `out`; return `out`. A run made with --no-judge can be
    judged this way too: its answers are what they are."""
    folder, out = Path(folder), Path(out)
    run = scored_run(folder)
    config: JudgeConfig = resolve_judge(workspace, base_url=base_url, model=model, api_key_env=api_key_env)
    if out.resolve() == folder.resolve():
        raise InputError("--out must be another folder: the run itself is kept as it was", field="out")
    with writing(out, f"run folder {out}", wait=False, clean=[(out, 1)]):
        _copy_and_score(workspace, run, folder, out, config)
    return out


def _copy_and_score(workspace: Workspace, run, folder: Path, out: Path, config: JudgeConfig) -> None:
    """Write the rejudged copy of `run` into `out` (or finish it) and score it with the judge `config`."""
    if (out / MANIFEST).exists():
        existing = read_run(out).manifest
        if existing.rejudged_from != str(folder.resolve()) or existing.judge != config.public():
            raise InputError(f"{out} already holds another run; choose a new --out", field="out")
    elif out.exists() and {p.name for p in out.iterdir()} - {TRACES}:   # traces alone: a copy killed half way
        raise InputError(f"{out} exists and is not empty; choose a new --out", field="out")
    else:
        out.mkdir(parents=True, exist_ok=True)
        settings = run.manifest.settings.model_copy(update={"no_judge": False})
        manifest = run.manifest.model_copy(update={"judge": config.public(), "prompt_versions": GENERATION.versions(),
                                                   "rejudged_from": str(folder.resolve()), "started_at": now(),
                                                   "settings": settings})
        atomic_write_bytes(out / TRACES, (folder / TRACES).read_bytes())
        RunManifest.model_validate(manifest.model_dump()).write(out / MANIFEST)   # the manifest last: a run
    score_run(workspace, out, judge=config)
