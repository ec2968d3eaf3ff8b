"""One writer at a time: a lock per thing written (a dataset, the KB, a snapshot's index, a run
folder), held for the whole read-modify-write.

The lock is the operating system's, taken on the folder itself (flock on the folder's descriptor),
so it adds no file to the workspace, and it is let go of however the process ends, a kill
included. Where folders cannot be locked (Windows), `filelock` locks a `.lock` file in it instead.

A second writer waits, saying so once on standard error, and stops with one line if the first has
not finished within CURATE_LOCK_TIMEOUT seconds (600 by default); `wait=False` stops at once. The
holder removes what a killed write left behind. A lock is re-entrant within a thread, so a command
that writes a dataset may call another that does.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from curate.errors import CurateError
from curate.fileio import remove_stale

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

DEFAULT_TIMEOUT = 600.0
POLL = 0.1

_held: dict[str, list] = {}   # folder -> [thread id, depth, descriptor or filelock]
_guard = threading.Lock()


class Busy(CurateError):
    """Another command is writing what this one needs to write."""


def timeout() -> float:
    """Return how long a writer waits for another: CURATE_LOCK_TIMEOUT seconds, else 600."""
    raw = os.environ.get("CURATE_LOCK_TIMEOUT")
    try:
        value = float(raw) if raw else DEFAULT_TIMEOUT
    except ValueError:
        raise CurateError(f"CURATE_LOCK_TIMEOUT={raw!r} is not a number of seconds") from None
    return max(0.0, value)


def _try(folder: Path):
    """Return (a held lock on `folder` or None when another holds it, whether this call made the folder).

    The folder is made when missing: the writer this one waited for may have made it and, leaving it
    empty, removed it again. A lock that was taken on a folder removed meanwhile is let go of and
    taken again on the folder now at that path: two writers never hold one path each through a
    different folder."""
    made = False
    while True:
        if not folder.exists():
            folder.mkdir(parents=True, exist_ok=True)
            made = True
        if fcntl is None:  # pragma: no cover - Windows
            from filelock import FileLock, Timeout
            lock = FileLock(str(folder / ".lock"))
            try:
                lock.acquire(timeout=0)
            except Timeout:
                return None, made
            return lock, made
        try:
            fd = os.open(folder, os.O_RDONLY)
        except FileNotFoundError:  # removed between the two steps: make it again
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None, made
        except BaseException:
            os.close(fd)
            raise
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(folder))
        except FileNotFoundError:
            same = False
        if same:
            return fd, made
        os.close(fd)


def _let_go(handle) -> None:
    if isinstance(handle, int):
        os.close(handle)  # closing the descriptor lets go of the lock
    else:  # pragma: no cover - Windows
        handle.release()


@contextlib.contextmanager
def writing(folder: Path, what: str, wait: bool = True,
            clean: Sequence[tuple[Path, int]] | None = None) -> Iterator[None]:
    """Hold the write lock of `folder` for the block (see the module docstring); `what` names it for
    the user ("dataset 'faq'"). `clean`: the (folder, depth) pairs this lock guards, where leftovers
    of killed writes are removed (default: `folder`, three levels down). A folder created for the
    lock and still empty afterwards is removed again."""
    folder = Path(folder).resolve()
    created = False
    key, me = str(folder), threading.get_ident()
    with _guard:
        entry = _held.get(key)
        if entry is not None and entry[0] == me:
            entry[1] += 1
            handle = None
        else:
            handle, created = _try(folder)
    try:
        if entry is None or entry[0] != me:
            if handle is None:
                if not wait:
                    raise Busy(f"{what} is being written by another command; let it finish first")
                print(f"waiting for another command writing {what} ...", file=sys.stderr, flush=True)
                deadline = time.monotonic() + timeout()
                while handle is None:
                    if time.monotonic() > deadline:
                        raise Busy(f"{what} is still being written by another command after {timeout():g} s; "
                                   f"try again when it has finished")
                    time.sleep(POLL)
                    handle, made = _try(folder)
                    created = created or made
            with _guard:
                _held[key] = [me, 1, handle]
            for place, depth in clean if clean is not None else [(folder, 3)]:
                remove_stale(place, depth)
        yield
    finally:
        with _guard:
            entry = _held.get(key)
            done = entry is not None and entry[0] == me and entry[1] == 1
            if entry is not None and entry[0] == me:
                entry[1] -= 1
            if done:
                del _held[key]
        if done:
            try:
                if created and fcntl is not None:  # removed while still held (see _try)
                    with contextlib.suppress(OSError):
                        folder.rmdir()  # only if still empty
            finally:
                _let_go(entry[2])
            if created and fcntl is None:  # pragma: no cover - Windows: the .lock file is let go of first
                with contextlib.suppress(OSError):
                    folder.rmdir()
