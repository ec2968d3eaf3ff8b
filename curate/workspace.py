"""The workspace: a folder with curate.toml, KB snapshots and datasets."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from curate.errors import InputError, WorkspaceError
from curate.fileio import atomic_write_text

CONFIG_NAME = "curate.toml"
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
# A sentence-transformers model name or a local folder.
model = "{embedding_model}"

[judge]
# Any OpenAI-compatible endpoint.
base_url = "{judge_base_url}"
model = "{judge_model}"
# The NAME of the environment variable holding the key (never the key itself).
api_key_env = "{judge_api_key_env}"

[guidelines]
# Folder holding the relevance guidelines; its content hash is the guideline version.
path = "{guidelines}"
"""

DEFAULTS = {
    "default_kb": "",
    "embedding_model": "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2",
    "judge_base_url": "http://127.0.0.1:8080/v1",
    "judge_model": "judge",
    "judge_api_key_env": "OPENAI_API_KEY",
    "guidelines": "",
}


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

    def config(self) -> dict[str, Any]:
        """Return curate.toml parsed; a syntax error names the file and line."""
        try:
            return tomllib.loads(self.config_path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            where = re.search(r"\(at line (\d+), column \d+\)", str(exc))
            message = str(exc).replace(where.group(0), "").strip() if where else str(exc)
            raise InputError(f"not valid TOML: {message}", file=str(self.config_path),
                             line=int(where.group(1)) if where else None) from None

    def setting(self, section: str, key: str, default: Any = None) -> Any:
        """Return one setting of curate.toml, or `default` when it is absent or empty."""
        value = self.config().get(section, {}).get(key, default)
        return default if value == "" else value


def init_workspace(directory: Path, **settings: str) -> Workspace:
    """Create a workspace in `directory` and return it; refuse to overwrite an existing one."""
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
    atomic_write_text(root / CONFIG_NAME, DEFAULT_CONFIG.format(**values))
    return Workspace(root)


def find_workspace(start: Path | None = None, explicit: Path | None = None) -> Workspace:
    """Return the workspace named by `explicit`, else the nearest one at or above `start`."""
    if explicit is not None:
        root = Path(explicit).resolve()
        if not (root / CONFIG_NAME).is_file():
            raise WorkspaceError(f"{root} is not a curate workspace (no {CONFIG_NAME}); run `curate init {explicit}`")
        return Workspace(root)
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / CONFIG_NAME).is_file():
            return Workspace(folder)
    raise WorkspaceError(f"no {CONFIG_NAME} in {here} or above; run `curate init` or pass --workspace")
