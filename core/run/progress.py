"""Showing a run's progress on stderr.

On a terminal, a rich display: done/total per condition and overall, each with its ETA, and a
status line read live from the run's state. Elsewhere (batch jobs, CI logs), one plain line
every `every_s` seconds or every `every_fraction` of the work, whichever comes first:
done/total, the rate of this session, errors and the ETA. In a notebook (a Jupyter kernel),
the same plain lines, rarer: a cell's output keeps every line a display redraws in place, and a
saved notebook keeps them all, so a redrawn display would fill the cell (however its stderr
answers `isatty`).

Both are callables that take the runner's progress state (see `runner.progress_state`) and are
used as context managers.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO


def status_line(state: dict) -> str:
    """Requests in flight, retries, errors, cache hits, tokens and cost, from the run's state."""
    b = state["backend"]
    line = (
        f"in flight {b.get('in_flight', 0)}  retries {b.get('retries', 0)}  errors {state['errors']}  "
        f"cached {state['cached']}  tokens {b.get('prompt_tokens', 0):,}+{b.get('completion_tokens', 0):,}"
    )
    return line + (f"  ${b['cost_usd']:.4f}" if b.get("cost_usd") else "")


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class PlainProgress:
    """One plain line at a time, for output that is not a terminal. Lines come at every new
    `every_fraction` of the work and, from a timer thread, whenever `every_s` seconds passed
    without one (so a run that waits on slow requests still shows that it is alive)."""

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        every_s: float = 10.0,
        every_fraction: float = 0.05,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.stream = stream or sys.stderr
        self.every_s, self.every_fraction, self.clock = every_s, every_fraction, clock
        self._state: dict | None = None
        self._start = (0.0, 0)  # (time, done) at the first update: the rate is this session's
        self._last_time = 0.0
        self._last_step = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._timer: threading.Thread | None = None

    def __enter__(self) -> PlainProgress:
        self._timer = threading.Thread(target=self._tick, name="medvqa-progress", daemon=True)
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._timer is not None:
            self._timer.join()

    def __call__(self, state: dict) -> None:
        with self._lock:
            now = self.clock()
            step = self._step(state)
            if self._state is None:  # the start: nothing done in this session yet
                self._state, self._start = state, (now, state["done"])
                self._last_step, self._last_time = step, now
                return
            if step <= self._last_step and now - self._last_time < self.every_s:
                return
            self._write(state, now, step)

    def _tick(self) -> None:
        while not self._stop.wait(min(1.0, self.every_s)):
            with self._lock:
                now = self.clock()
                if self._state is not None and now - self._last_time >= self.every_s:
                    self._write(self._state, now, self._step(self._state))

    def _write(self, state: dict, now: float, step: int) -> None:
        self._last_step, self._last_time = step, now
        self.stream.write(self.line(state, now) + "\n")
        self.stream.flush()

    def _step(self, state: dict) -> int:
        # the small epsilon keeps 30/200 at step 3 of 5 % despite floating point
        return int(state["done"] / state["total"] / self.every_fraction + 1e-9) if state["total"] else 0

    def line(self, state: dict, now: float) -> str:
        """`412/817 (50%)  23.1 req/s  errors 3  ETA 0:00:17`"""
        done, total = state["done"], state["total"]
        t0, done0 = self._start
        rate = (done - done0) / (now - t0) if now > t0 else 0.0
        eta = _duration((total - done) / rate) if rate > 0 else "unknown"
        percent = f"{100 * done / total:.0f}%" if total else "-"
        return f"{done}/{total} ({percent})  {rate:.1f} req/s  errors {state['errors']}  ETA {eta}"


class RichProgress:
    """A rich progress display on stderr: done/total per condition and overall, each with its
    ETA, and the status line, refreshed live."""

    def __enter__(self) -> RichProgress:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
        from rich.text import Text

        live: dict[str, dict] = {}

        class RunProgress(Progress):
            def get_renderables(self):
                yield self.make_tasks_table(self.tasks)
                if live:
                    yield Text(status_line(live["state"]), style="dim")

        self._live = live
        # on stderr: rich's default console is stdout, where `run > out.txt` would keep the display
        self._progress = RunProgress(
            TextColumn("[bold]{task.description:<8}"),
            BarColumn(bar_width=32),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            transient=False,
            console=Console(stderr=True),
        )
        self._progress.start()
        self._tasks: dict[str, Any] = {}
        return self

    def __call__(self, state: dict) -> None:
        tasks = self._tasks
        if not tasks:
            self._live["state"] = state
            tasks["all"] = self._progress.add_task("all", total=state["total"])
        for cond, counts in state["conditions"].items():
            if cond not in tasks:  # forced guesses add a condition during the run
                tasks[cond] = self._progress.add_task(cond, total=counts["total"])
            self._progress.update(tasks[cond], completed=counts["done"], total=counts["total"])
        self._progress.update(tasks["all"], completed=state["done"], total=state["total"])

    def __exit__(self, *exc) -> None:
        self._progress.stop()


# In a notebook: a line at every tenth of the work, and after 5 minutes without one (a run of
# an hour writes some 20 lines, not a line every 10 seconds).
NOTEBOOK_EVERY_S, NOTEBOOK_EVERY_FRACTION = 300.0, 0.10


def in_notebook() -> bool:
    """True in a Jupyter kernel (notebook, JupyterLab, Colab, VS Code, qtconsole), False in a
    terminal IPython and in plain Python. IPython is never imported here: a kernel has already
    imported it, and it is not a dependency."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    if shell is None:
        return False
    return any(k.__name__ == "ZMQInteractiveShell" for k in type(shell).__mro__) or "IPKernelApp" in (
        getattr(shell, "config", None) or {}
    )


def for_stderr() -> RichProgress | PlainProgress:
    """Rare plain lines in a notebook, the rich display on a terminal, plain lines elsewhere."""
    if in_notebook():
        return PlainProgress(every_s=NOTEBOOK_EVERY_S, every_fraction=NOTEBOOK_EVERY_FRACTION)
    return RichProgress() if sys.stderr.isatty() else PlainProgress()
