"""Running a page of the docs as a reader would: its commands in order, in one shell, in a fresh folder.

The convention (docs/reference/index.md, "How the docs are tested", says it for writers):

- a ```console block holds commands, each on a line opening with `$ ` (a line ending with `\\` goes
  on), each followed by the output it prints. Every output line shown must appear in the real
  output, in order, with white space runs made one and `...` standing for anything (a line that is
  only `...` stands for any number of lines);
- a ```sh (or bash, shell) block is commands without output, one a line (heredocs and `\\` lines
  kept whole);
- a block whose info string has `title="PATH"` is a file the reader creates: it is written at PATH,
  from the folder the commands are in at that point;
- a ```python block without a title is run with the project's Python in that folder;
- a command ending in `# exit N` must exit N; every other must exit 0;
- blocks inside an HTML comment that opens with `<!-- docs-test` are steps the reader does not see,
  standing in for a person (an annotator's clicks in a web UI); a comment `<!-- docs-test: not run -->`
  right before a block leaves that one block out (a config excerpt, an output shown apart).

Besides the expected lines, the output of a command may hold no warning, traceback or internal
error that the page does not show.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
FENCE = re.compile(r"^(`{3,})([^`\n]*)$")
TITLE = re.compile(r'title="([^"]+)"')
EXIT = re.compile(r"#\s*exit (\d+)\b[^'\"]*$")
HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
SHELLS = {"sh", "bash", "shell"}
# what a command's output may not hold unless the page shows it
ALARMS = re.compile(r"^\s*(warning\b|traceback \(most recent call last\)|internal error\b)", re.I)


@dataclass
class Step:
    """One thing a reader does: run a command, create a file, run a Python block."""

    kind: str  # "command", "file", "python"
    text: str
    where: str  # "docs/tutorials/x.md:12"
    path: str | None = None
    expected: list[str] = field(default_factory=list)
    compare: bool = False  # a console block: its shown output is compared
    exit_code: int = 0
    hidden: bool = False


@dataclass
class Block:
    """A fenced code block of a page."""

    info: str
    body: list[str]
    line: int  # of the opening fence, 1-based
    hidden: bool
    skip: bool

    @property
    def language(self) -> str:
        return (self.info.split() or [""])[0].lower()

    @property
    def title(self) -> str | None:
        found = TITLE.search(self.info)
        return found.group(1) if found else None


def blocks(text: str) -> list[Block]:
    """Return the page's fenced blocks in order, those inside a `<!-- docs-test` comment marked hidden
    and those right after a `<!-- docs-test: not run -->` marked skip."""
    found: list[Block] = []
    lines = text.split("\n")
    hidden = skip_next = False
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped.startswith("<!-- docs-test: not run"):
            skip_next = True
        elif stripped.startswith("<!-- docs-test") and not stripped.endswith("-->"):
            hidden = True
        elif hidden and stripped == "-->":
            hidden = False
        fence = FENCE.match(line)
        if fence:
            ticks, info = fence.group(1), fence.group(2).strip()
            start = i
            i += 1
            body = []
            while i < len(lines) and lines[i].strip() != ticks:
                body.append(lines[i])
                i += 1
            found.append(Block(info, body, start + 1, hidden, skip_next))
            skip_next = False
        i += 1
    return found


def shell_commands(lines: list[str]) -> list[tuple[int, str]]:
    """Return (offset of its first line, command) for each command of shell lines: a line ending with
    `\\` joins the next, a heredoc takes every line up to its end word; blank lines and comments go."""
    commands: list[tuple[int, str]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip() or line.lstrip().startswith("#"):
            i += 1
            continue
        start, parts = i, [line]
        while parts[-1].endswith("\\") and i + 1 < len(lines):
            i += 1
            parts.append(lines[i])
        heredoc = HEREDOC.search(parts[-1])
        if heredoc:
            end = heredoc.group(2)
            while i + 1 < len(lines):
                i += 1
                parts.append(lines[i])
                if lines[i].strip() == end:
                    break
        commands.append((start, "\n".join(parts)))
        i += 1
    return commands


def steps(path: Path, *, hidden_ok: bool = True) -> list[Step]:
    """Return the steps of a Markdown page, in order; a block that is neither runnable nor a file
    nor marked `not run` is an error (so no example slips by untested)."""
    rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
    found: list[Step] = []
    for block in blocks(path.read_text(encoding="utf-8")):
        where = f"{rel}:{block.line}"
        if block.skip:
            continue
        if block.hidden and not hidden_ok:
            raise ValueError(f"{where}: hidden steps are not allowed here")
        if block.title:
            found.append(Step("file", "\n".join(block.body) + "\n", where, path=block.title, hidden=block.hidden))
        elif block.language == "console":
            found.extend(_console(block, where))
        elif block.language in SHELLS:
            for offset, command in shell_commands(block.body):
                found.append(Step("command", command, f"{rel}:{block.line + 1 + offset}",
                                  exit_code=_exit_code(command), hidden=block.hidden))
        elif block.language == "python":
            found.append(Step("python", "\n".join(block.body) + "\n", where, hidden=block.hidden))
        else:
            raise ValueError(f"{where}: a ```{block.info} block is neither run nor a file (give it "
                             "title=\"PATH\", or put <!-- docs-test: not run --> before it)")
    return found


def _exit_code(command: str) -> int:
    found = EXIT.search(command.split("\n")[0].rstrip("\\").rstrip())
    return int(found.group(1)) if found else 0


def _console(block: Block, where: str) -> list[Step]:
    found: list[Step] = []
    lines = block.body
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith("$ "):
            if line.strip() and not found:
                raise ValueError(f"{where}: a console block opens with output, not a `$ ` command")
            if found:
                found[-1].expected.append(line)
            i += 1
            continue
        start, parts = i, [line[2:]]
        while parts[-1].endswith("\\") and i + 1 < len(lines):
            i += 1
            parts.append(lines[i])
        command = "\n".join(parts)
        found.append(Step("command", command, f"{where.rsplit(':', 1)[0]}:{block.line + 1 + start}",
                          compare=True, exit_code=_exit_code(command), hidden=block.hidden))
        i += 1
    return found


def _normal(line: str) -> str:
    return " ".join(line.split())


def _pattern(line: str) -> re.Pattern:
    return re.compile("^" + ".*".join(re.escape(part) for part in re.split(r"\s*\.\.\.\s*", _normal(line))) + "$")


def mismatch(expected: list[str], actual: str) -> str | None:
    """Return why `actual` does not show the `expected` lines (in order, `...` for anything), or None."""
    got = [_normal(line) for line in actual.splitlines() if line.strip()]
    shown = [line for line in expected if line.strip()]
    position = 0
    matched: set[int] = set()
    for line in shown:
        if _normal(line) == "...":
            continue
        pattern = _pattern(line)
        while position < len(got) and not pattern.match(got[position]):
            position += 1
        if position == len(got):
            return f"the page shows a line the command does not print (in this order):\n  {line.strip()}"
        matched.add(position)
        position += 1
    for number, line in enumerate(got):
        if number not in matched and ALARMS.match(line):
            return f"the command printed a line the page does not show:\n  {line}"
    return None


@dataclass
class Outcome:
    """What running a page's steps gave."""

    steps: list[Step]
    outputs: list[str]
    codes: list[int | None]
    seconds: float
    problem: str | None = None


def environment(home: Path) -> dict[str, str]:
    """Return a reader's environment: a fresh home, this project's `curate`, `evalrun` and Python
    first on the path, none of the settings a test or the machine might have set."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CURATE_", "ARGILLA_", "BASELINE_", "PYTEST_", "COV_"))}
    env.update(HOME=str(home), PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
               PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1", COLUMNS="120", HF_HUB_OFFLINE="1",
               DOCS_PYTHON=sys.executable)
    return env


def script(page_steps: list[Step], logs: Path, replace: dict[str, str]) -> str:
    """Return the bash script that runs the steps in one shell, each step's output and exit code in
    `logs`, stopping at the first step that exits otherwise than it should."""
    out = ["set -u"]
    for n, step in enumerate(page_steps):
        text = step.text
        for old, new in replace.items():
            text = text.replace(old, new)
        end = f"DOCS_END_{n}"
        log, code = logs / f"{n}.out", logs / f"{n}.rc"
        if step.kind == "file":
            out.append(f'mkdir -p "$(dirname {_quote(step.path)})" && cat > {_quote(step.path)} <<\'{end}\'\n'
                       f"{text}{end}\nprintf 0 > {_quote(str(code))}")
            continue
        if step.kind == "python":
            body = f'"$DOCS_PYTHON" - <<\'{end}\'\n{text}{end}'
        else:
            body = text
        out.append(f"{{ {body}\n}} > {_quote(str(log))} 2>&1 < /dev/null\nprintf $? > {_quote(str(code))}\n"
                   f'[ "$(cat {_quote(str(code))})" = {step.exit_code} ] || exit 99')
    return "\n".join(out) + "\n"


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


CONTINUES = re.compile(r"<!-- docs-test: continues (\S+) -->")
PORT = re.compile(r"<!-- docs-test: free port (\d+) -->")


def continues(path: Path) -> Path | None:
    """Return the page whose end this page starts from (`<!-- docs-test: continues PAGE -->`), if any."""
    found = CONTINUES.search(path.read_text(encoding="utf-8"))
    return (path.parent / found.group(1)).resolve() if found else None


def ports(path: Path) -> list[str]:
    """Return the port numbers the page uses that a run replaces with free ones
    (`<!-- docs-test: free port N -->`), so two runs at once do not collide."""
    return PORT.findall(path.read_text(encoding="utf-8"))


def run(page_steps: list[Step], folder: Path, *, timeout: float = 900, replace: dict[str, str] | None = None,
        name: str = "page") -> Outcome:
    """Run the steps in `folder`/work (fresh, or where an earlier page left it) and return what each
    printed and how it exited; the first problem (an exit code, a shown line not printed, an unshown
    warning) is in `problem`."""
    work, logs, home = folder / "work", folder / f"logs-{name}", folder / "home"
    for path in (work, logs, home):
        path.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.sh").write_text(script(page_steps, logs, replace or {}), encoding="utf-8")
    started = time.monotonic()
    process = subprocess.Popen(["bash", str(folder / f"{name}.sh")], cwd=work, env=environment(home),
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               start_new_session=True)
    try:
        shell_output = process.communicate(timeout=timeout)[0].decode("utf-8", "replace")
        timed_out = False
    except subprocess.TimeoutExpired:
        timed_out = True
        shell_output = ""
    finally:
        try:  # the shell and whatever it left running (a server started with &)
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        process.wait()
    seconds = time.monotonic() - started
    outputs, codes = [], []
    for n, _ in enumerate(page_steps):
        log, code = logs / f"{n}.out", logs / f"{n}.rc"
        outputs.append(log.read_text(encoding="utf-8", errors="replace") if log.exists() else "")
        codes.append(int(code.read_text()) if code.exists() and code.read_text().strip() else None)
    outcome = Outcome(page_steps, outputs, codes, seconds)
    for step, output, code in zip(page_steps, outputs, codes):
        expected = step.expected
        for old, new in (replace or {}).items():
            expected = [line.replace(old, new) for line in expected]
        shown = f"{step.where}: `{step.text.splitlines()[0] if step.text else ''}`"
        if code is None:
            outcome.problem = (f"{shown} did not finish" + (f" within {timeout:.0f} s" if timed_out else "")
                               + f"\n{shell_output[-2000:]}")
            break
        if code != step.exit_code:
            outcome.problem = f"{shown} exited {code}, the page expects {step.exit_code}\n{output[-3000:]}"
            break
        if step.kind == "command":
            why = mismatch(expected if step.compare else [], output)
            if why:
                outcome.problem = f"{shown}: {why}\n--- its output:\n{output[-3000:]}"
                break
    return outcome
