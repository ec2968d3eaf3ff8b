"""Subprocesses a test can wait on by what they say, not by the clock: on a busy machine a command may
take seconds to start, so "sleep, then assert it is waiting" is a race; "wait for the line it
prints when it waits" is not."""

from __future__ import annotations

import subprocess
import threading
import time

# How long a test waits for an event before it gives up: a safety net against a hang, never a
# margin the test relies on (a starved machine may take this long only if something is wrong).
PATIENCE = 300.0


class Watched:
    """A subprocess whose standard output and error are read by threads as they come; `wait_for`
    blocks until a line appears, `communicate` returns all of both once it has ended."""

    def __init__(self, args, **popen):
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)
        self._lines: dict[str, list[str]] = {"stdout": [], "stderr": []}
        self._changed = threading.Condition()
        self._readers = [threading.Thread(target=self._read, args=(name,), daemon=True) for name in self._lines]
        for reader in self._readers:
            reader.start()

    def _read(self, name: str) -> None:
        for line in getattr(self.process, name):
            with self._changed:
                self._lines[name].append(line)
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def _said(self, text: str, name: str) -> bool:
        return any(text in line for line in self._lines[name])

    def wait_for(self, text: str, stream: str = "stderr", within: float = PATIENCE) -> None:
        """Return once a line of `stream` holds `text`; fail if the process ends first or `within`
        seconds pass (a safety net)."""
        deadline = time.monotonic() + within
        with self._changed:
            while not self._said(text, stream):
                ended = self.process.poll() is not None and not any(r.is_alive() for r in self._readers)
                if ended:
                    raise AssertionError(f"the process ended (exit {self.process.returncode}) without saying "
                                         f"{text!r}; stderr: {''.join(self._lines['stderr'])[-2000:]}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"the process did not say {text!r} within {within:g} s")
                self._changed.wait(min(left, 0.5))

    def poll(self) -> int | None:
        return self.process.poll()

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    def communicate(self, timeout: float = PATIENCE) -> tuple[str, str]:
        """Return (stdout, stderr), all of each, once the process has ended (waiting `timeout` at most)."""
        self.process.wait(timeout=timeout)
        for reader in self._readers:
            reader.join(timeout=timeout)
        with self._changed:
            return "".join(self._lines["stdout"]), "".join(self._lines["stderr"])

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()


def wait_until(condition, what: str, within: float = PATIENCE, every: float = 0.02):
    """Return the first true value of `condition()`, polled every `every` s; fail after `within` s (a
    safety net, not a margin)."""
    deadline = time.monotonic() + within
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {within:g} s")
        time.sleep(every)
