"""The run's jobs: one worker thread that runs them, and a watch that ends a stalled one."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pyspark.sql import SparkSession

if TYPE_CHECKING:
    from sparklog.spark.storage import Database


class _Worker:
    """The daemon thread that runs a run's jobs, one after another, with the local
    properties (job group, tags, scheduler pool) of the thread that started it.

    One thread for the whole run, not one per round: each new Python thread opens its
    own connection to the JVM (pinned threads) and copies the caller's properties, a
    dozen round trips that a round over a few hundred tuples would otherwise pay.
    """

    def __init__(self, spark: SparkSession) -> None:
        import queue
        import threading

        from pyspark.util import inheritable_thread_target

        self.tasks: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        serve = inheritable_thread_target(spark)(self._serve)  # the caller's properties
        threading.Thread(target=serve, name="sparklog-round", daemon=True).start()

    def _serve(self) -> None:
        while (task := self.tasks.get()) is not None:
            task()

    def stop(self) -> None:
        self.tasks.put(None)


class _Job:
    """A round's jobs on the run's worker thread, watched from the calling thread.

    A job can stop making progress without failing: when Spark's own scheduler thread
    dies (a StackOverflowError while serializing a task, say), the job waits forever
    for tasks nobody launches. :meth:`wait` ends the run with an error instead, once no
    task has run or finished for ``Options.stall_seconds``. A daemon thread, so that
    a process whose job hangs can still exit.
    """

    def __init__(self, db: Database, fn: Callable[..., None], *args: Any) -> None:
        import threading

        self.db, self.error = db, None
        self.done = threading.Event()

        def body() -> None:
            try:
                fn(db, *args)
            except BaseException as exc:  # noqa: BLE001 - re-raised by wait()
                self.error = exc
            finally:
                self.done.set()
        db.worker().tasks.put(body)

    def wait(self) -> None:
        from sparklog.errors import EngineError
        from sparklog.spark.session import JVM_THREAD_FAILURES

        limit = self.db.options.stall_seconds
        last, since = None, time.monotonic()
        failures = len(JVM_THREAD_FAILURES)
        while not self.done.wait(1.0):
            if len(JVM_THREAD_FAILURES) > failures:  # a thread of Spark's JVM died
                self.db.spark.sparkContext.cancelAllJobs()
                raise EngineError(f"Spark failed: {JVM_THREAD_FAILURES[failures]}")
            progress = _progress(self.db.tracker())
            if progress != last or progress[0] > 0:
                last, since = progress, time.monotonic()
            elif limit and time.monotonic() - since > limit:
                self.db.spark.sparkContext.cancelAllJobs()
                raise EngineError(
                    f"Spark made no progress for {limit:g} s: no task ran or finished, "
                    "so its scheduler has probably failed (Spark's log on stderr says why)")
        if self.error is not None:
            raise self.error


def _progress(tracker: Any) -> tuple[int, int]:
    """(tasks running, tasks finished) over Spark's active stages."""
    running = finished = 0
    for stage in tracker.getActiveStageIds():
        info = tracker.getStageInfo(stage)
        if info is not None:
            running += info.numActiveTasks
            finished += info.numCompletedTasks + info.numFailedTasks
    return running, finished
