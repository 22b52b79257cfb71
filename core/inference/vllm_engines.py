"""One vLLM engine per process for each model and engine settings, shared by every backend that
asks for it, and shut down when the last run using it ends.

A `vllm.LLM` takes the GPUs' memory for its weights and KV cache (`gpu_memory_utilization`, 0.9
by default) from its start to its end: a second one started beside it fails at start-up ("Free
memory on device ... is less than desired GPU memory utilization"). A run with `--repeats N`
builds one backend per repeat (each with its own seed), and an eval set runs several
experiments of one model in turn, so the engine is not the backend's own: backends ask
`ENGINES` for it by its key (the model, the parallel sizes and the engine options), and every
request carries its repeat's seed in its `SamplingParams` instead of the engine's.

- `acquire(key, build, cleanup)` gives the engine of `key`, building it when there is none;
  `release(key)` gives it back. A backend holds an engine while it answers (`generate`).
- Outside a `kept()` scope, an engine no backend holds is shut down at once. Inside one (a run,
  an eval set), it stays up for the next backend of the same key, and is shut down when the
  outermost scope ends, or before an engine of another key is built, so that two engines never
  wait side by side on the GPUs.
- Shutting down is what vLLM's examples do (`examples/offline_inference/prefix_caching.py`,
  0.12.0; `examples/features/automatic_prefix_caching/prefix_caching_offline.py`, 0.34.0): the
  last reference to the `LLM` dropped, then `vllm.distributed.cleanup_dist_env_and_memory()`,
  which collects it and empties the device cache. Neither version has an `LLM.shutdown()`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any


@dataclass
class _Engine:
    engine: Any
    cleanup: Callable[[], None]  # run once the engine is dropped (vLLM's memory cleanup)
    users: int = 0


class EnginePool:
    """The engines of this process, by key (see the module's docstring)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._engines: dict[str, _Engine] = {}
        self._kept = 0  # open `kept()` scopes
        self.built = 0  # engines built in the life of the pool
        self.shut_down = 0  # engines shut down

    def acquire(self, key: str, build: Callable[[], Any], cleanup: Callable[[], None]) -> Any:
        """The engine of `key`, built by `build()` when there is none (every idle engine of
        another key shut down first); `cleanup()` runs after it is dropped, at its shutdown."""
        with self._lock:
            entry = self._engines.get(key)
            if entry is None:
                for other in [k for k, e in self._engines.items() if e.users == 0]:
                    self._shut(other)
                entry = _Engine(build(), cleanup)
                self._engines[key] = entry
                self.built += 1
            entry.users += 1
            return entry.engine

    def release(self, key: str) -> None:
        """Give back the engine of `key`; shut it down when no one holds it and no scope keeps it."""
        with self._lock:
            entry = self._engines.get(key)
            if entry is None or entry.users == 0:
                raise RuntimeError(f"no engine of {key} is held")
            entry.users -= 1
            if entry.users == 0 and self._kept == 0:
                self._shut(key)

    @contextmanager
    def kept(self) -> Iterator[None]:
        """Keep engines up between the backends that use them until the outermost scope ends."""
        with self._lock:
            self._kept += 1
        try:
            yield
        finally:
            with self._lock:
                self._kept -= 1
                if self._kept == 0:
                    for key in [k for k, e in self._engines.items() if e.users == 0]:
                        self._shut(key)

    def running(self) -> list[str]:
        """The keys of the engines up now."""
        with self._lock:
            return list(self._engines)

    def _shut(self, key: str) -> None:
        entry = self._engines.pop(key)
        cleanup = entry.cleanup
        entry.engine = None  # the pool held the last reference: the engine goes with it
        del entry
        self.shut_down += 1
        cleanup()


ENGINES = EnginePool()
