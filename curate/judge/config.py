"""Judge settings: flags override the environment, which overrides curate.toml."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from curate.errors import InputError
from curate.credentials import MASK, check_base_url, check_key_env_name, looks_like_secret, mask_url
from curate.workspace import Workspace

ENV = {"base_url": "CURATE_JUDGE_BASE_URL", "model": "CURATE_JUDGE_MODEL",
       "api_key_env": "CURATE_JUDGE_API_KEY_ENV", "timeout": "CURATE_JUDGE_TIMEOUT"}
FLAGS = {"base_url": "--judge-base-url", "model": "--judge-model", "api_key_env": "--judge-api-key-env",
         "timeout": "--judge-timeout"}


@dataclass(frozen=True)
class JudgeConfig:
    """Where the judge is and how to talk to it. Holds the NAME of the key's variable, never a key."""

    base_url: str
    model: str
    api_key_env: str | None = None
    timeout: float = 60.0
    concurrency: int = 4
    max_retries: int = 3
    backoff: float = 0.5
    max_tokens: int = 512
    response_format: str = "json_object"
    """json_object (any endpoint that does JSON mode), or json_schema: each prompt's verdict schema is sent
    (`response_format.json_schema`), which llama.cpp, vLLM, Ollama and OpenAI hold the answer to, so that
    even a small local model answers in the shape asked."""
    # USD per million tokens: (input, output); unknown models cost nothing known (cost None).
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)

    def api_key(self) -> str | None:
        """Return the key from the environment at call time (None: a local server needs none)."""
        return os.environ.get(self.api_key_env) if self.api_key_env else None

    def public(self) -> dict:
        """Return what may be written to a manifest or report: no key, only its variable's name (and a
        URL's credentials masked, should a config built without `resolve` carry any)."""
        key_env = MASK if looks_like_secret(self.api_key_env) else self.api_key_env
        return {"base_url": mask_url(self.base_url), "model": self.model, "api_key_env": key_env,
                "timeout": self.timeout, "concurrency": self.concurrency, "max_retries": self.max_retries,
                "response_format": self.response_format}

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        """Return the USD cost of a number of tokens, or None when the model has no price."""
        price = self.prices.get(self.model)
        if price is None:
            return None
        return (prompt_tokens * price[0] + completion_tokens * price[1]) / 1_000_000


RESPONSE_FORMATS = ("json_object", "json_schema")

# the model asked for when an endpoint is given without one (a local server serves any name)
DEFAULT_MODEL = "judge"


def resolve(workspace: Workspace | None, *, base_url: str | None = None, model: str | None = None,
            api_key_env: str | None = None, timeout: float | None = None, concurrency: int | None = None,
            max_retries: int | None = None, section: str = "judge") -> JudgeConfig:
    """Return the judge settings: each from its flag, else the environment, else curate.toml's [judge].
    `section` reads another endpoint's section of curate.toml the same way ([generator]: the model that
    writes questions), without the judge's environment variables; its prices, when it gives none, are
    the judge's."""
    config = workspace.config().get(section, {}) if workspace is not None else {}
    if section != "judge" and workspace is not None and "prices" not in config:
        config = {**config, "prices": workspace.config().get("judge", {}).get("prices")}

    def pick(name: str, flag) -> tuple:
        """Return the setting and where it came from, as InputError's keyword arguments."""
        if flag is not None:
            return flag, {"field": FLAGS[name]}
        if section == "judge" and os.environ.get(ENV.get(name, "")):
            return os.environ[ENV[name]], {"field": ENV[name]}
        # curate.toml's own values were checked, with their line, as the workspace read them
        return config.get(name) or None, {"field": f"{section}.{name}",
                                          "file": str(workspace.config_path) if workspace is not None else None}

    (chosen_url, url_source), (chosen_model, _) = pick("base_url", base_url), pick("model", model)
    chosen_key_env, key_env_source = pick("api_key_env", api_key_env)
    chosen_key_env = check_key_env_name(str(chosen_key_env) if chosen_key_env else None, **key_env_source)
    check_base_url(chosen_url and str(chosen_url), **url_source)
    if chosen_url and not chosen_model:
        chosen_model = DEFAULT_MODEL   # an endpoint given without a model: the name curate init writes
    if not chosen_url or not chosen_model:
        raise InputError("no judge configured: set [judge] base_url and model in curate.toml, "
                         "CURATE_JUDGE_BASE_URL/CURATE_JUDGE_MODEL, or --judge-base-url/--judge-model", field="judge")
    raw_timeout, timeout_source = pick("timeout", timeout)
    try:
        chosen_timeout = float(raw_timeout) if raw_timeout is not None else 60.0
    except (TypeError, ValueError):
        raise InputError(f"{section} timeout {raw_timeout!r} is not a number of seconds", **timeout_source) from None

    def whole(name: str, flag, default: int) -> int:
        """Return a whole-number setting (a flag's, else curate.toml's), or one line naming where it is wrong."""
        value = flag if flag is not None else config.get(name, default)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).strip().isdigit():
            raise InputError(f"must be a whole number, got {value!r}", file=None if flag is not None or workspace is
                             None else str(workspace.config_path), field=f"{section}.{name}")
        return int(value)
    response_format = config.get("response_format") or "json_object"
    if response_format not in RESPONSE_FORMATS:
        raise InputError(f"must be one of {', '.join(RESPONSE_FORMATS)}, not {response_format!r}",
                         file=str(workspace.config_path) if workspace else None, field=f"{section}.response_format")
    prices = {}
    for name, price in (config.get("prices") or {}).items():
        try:
            prices[name] = (float(price["input"]), float(price["output"]))
        except (KeyError, TypeError, ValueError):
            raise InputError(f"[{section}.prices] {name} needs input and output prices per million tokens (a model "
                             f"name with a dot is quoted: [{section}.prices.\"qwen2.5-7b\"])",
                             file=str(workspace.config_path) if workspace else None, field="prices") from None
    return JudgeConfig(base_url=str(chosen_url), model=str(chosen_model),
                       api_key_env=chosen_key_env, timeout=chosen_timeout,
                       concurrency=whole("concurrency", concurrency, 4) or 4,
                       max_retries=whole("max_retries", max_retries, 3),
                       prices=prices, response_format=response_format)
