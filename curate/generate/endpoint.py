"""The model that writes questions: curate.toml's [generator] when it names an endpoint, else the judge's."""

from __future__ import annotations

from dataclasses import replace

from curate.errors import InputError
from curate.judge.config import JudgeConfig, resolve
from curate.workspace import Workspace

MAX_TOKENS = 600   # a question, its answer and three quoted key points


def generator_config(workspace: Workspace) -> JudgeConfig | None:
    """Return the settings of the model that writes questions: [generator] (base_url, model, api_key_env,
    timeout, concurrency, response_format, max_tokens; prices: its own [generator.prices], else the
    judge's) when it gives a base_url, else the judge's ([judge], its environment variables); None when
    neither names an endpoint."""
    section = workspace.config().get("generator", {})
    try:
        config = resolve(workspace, section="generator") if section.get("base_url") else resolve(workspace)
    except InputError as error:
        if error.field == "judge":   # no judge configured at all
            return None
        raise
    max_tokens = section.get("max_tokens", MAX_TOKENS)
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 64:
        raise InputError(f"must be a whole number of tokens, at least 64, got {max_tokens!r}",
                         file=str(workspace.config_path), field="generator.max_tokens")
    return replace(config, max_tokens=max_tokens)
