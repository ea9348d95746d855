"""How a batch's partitions run on Dask, a bounded number at a time (`batch.run_batch`,
`stream.stream_batch`).

Partitions are taken from an iterator as the scheduler can take them: at most `IN_FLIGHT`
partitions per worker thread are submitted and not yet finished, so a batch holds a few
partitions of its dataset, never the whole of it. `finished(index, outcomes)` is called once per
partition as it ends (in any order; on the calling thread), which is where a batch writes it.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from citeaudit.errors import InputError
from citeaudit.extras import require

if TYPE_CHECKING:
    from dask.typing import Graph, Key

    from citeaudit.judge.cache import CallCache

SCHEDULERS = ("threads", "processes")  # besides the address of a running Dask scheduler
IN_FLIGHT = 4  # partitions submitted and not yet finished, per worker thread (a few to keep each busy)
LOCAL_WORKERS = 2  # worker processes of `--scheduler processes` unless `workers` is given
# Dask's worker profiler calls sys._current_frames() every 10 ms; on Python 3.11 a garbage collection
# during that call can deadlock the worker (cpython#106883, dask/distributed#8616), and the judge's
# threads make it likely: a worker of a judged batch hung until the scheduler restarted it.
NO_PROFILER = {"distributed.worker.profile.enabled": False}

Task = Callable[..., tuple[list[Any], list[dict]]]  # (partition, job, *shipped) -> (outcomes, recordings)
Shipping = Callable[[Any], Callable[[list[Any]], tuple]]  # client -> (partition -> its further task arguments)
Finished = Callable[[int, list[Any]], None]


def check_scheduler(scheduler: str) -> None:
    """`InputError` for an unknown scheduler."""
    if scheduler not in SCHEDULERS and not scheduler.startswith(("tcp://", "tls://", "inproc://", "ucx://")):
        raise InputError(f"scheduler {scheduler!r} is not threads, processes or a Dask scheduler address "
                         "(tcp://host:8786)")


def max_workers() -> int:
    """The most worker processes `--scheduler processes` starts: two per core, at least 4."""
    return max(4, 2 * (os.cpu_count() or 1))


def check_workers(workers: int | None, scheduler: str) -> None:
    """`InputError` unless `workers` is None or a count of 1 or more for `scheduler="processes"`."""
    if workers is None:
        return
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InputError(f"workers must be a whole number of 1 or more worker processes, not {workers!r}")
    if workers > max_workers():
        raise InputError(f"workers {workers} is more worker processes than this machine can run usefully "
                         f"({os.cpu_count() or 1} cores): give at most {max_workers()}, or start a Dask cluster "
                         "of your own and pass its address as --scheduler tcp://host:8786")
    if scheduler != "processes":
        raise InputError(f"workers sets the worker processes of --scheduler processes; scheduler {scheduler!r} "
                         "has its own (threads: this process; an address: the workers started there)")


def run_threads(chunks: Iterable[tuple[int, list[Any]]], task: Task, job: Any, finished: Finished) -> None:
    """Dask's threaded scheduler in this process, a window of partitions at a time."""
    dask = require("dask", "dask", "a batch (Dask's threaded scheduler)")
    from dask.callbacks import Callback

    index_of: dict[Key, int] = {}  # the window's tasks

    class _Finished(Callback):  # on the scheduler's thread, as each partition ends
        def _posttask(self, key: Key, result: object, dsk: Graph, state: dict[str, Any],
                      worker_id: int | None) -> None:
            if key in index_of and isinstance(result, tuple):
                finished(index_of[key], result[0])

    window = IN_FLIGHT * (os.cpu_count() or 1)
    pending = iter(chunks)
    while batch := list(itertools.islice(pending, window)):
        tasks = [dask.delayed(task, pure=False)(chunk, job) for _, chunk in batch]
        index_of.clear()
        index_of.update({delayed.key: index for delayed, (index, _) in zip(tasks, batch)})
        with _Finished():
            dask.compute(*tasks, scheduler="threads")


def local_cluster(workers: int | None = None) -> Any:
    """The `LocalCluster` of `--scheduler processes`: `workers` processes (default `LOCAL_WORKERS`) of
    one thread each, without the worker profiler."""
    dask = require("dask", "dask", "a batch on worker processes (a Dask LocalCluster)")
    LocalCluster = require("distributed", "dask", "a batch on worker processes (a Dask LocalCluster)").LocalCluster

    with dask.config.set(NO_PROFILER):  # the workers' nannies take the config as they start
        return LocalCluster(n_workers=workers or LOCAL_WORKERS, threads_per_worker=1, processes=True,
                            dashboard_address=":0")


def run_distributed(chunks: Iterable[tuple[int, list[Any]]], task: Task, job: Any, scheduler: str,
                    finished: Finished, workers: int | None = None, recordings: CallCache | None = None,
                    shipping: Shipping | None = None) -> None:
    """A LocalCluster (`scheduler="processes"`) or the Dask scheduler at an address; the workers'
    new recordings come back with their partitions and are appended to `recordings` (which the
    caller closes). `shipping(client)` gives each partition's further task arguments (`shipping.Shipper`)."""
    distributed = require("distributed", "dask", "a batch on Dask workers (--scheduler)")
    Client, as_completed = distributed.Client, distributed.as_completed

    cluster = None
    if scheduler == "processes":
        cluster = local_cluster(workers)
        address: Any = cluster
    else:
        address = scheduler
    try:
        with Client(address, timeout="20s") as client:
            window = IN_FLIGHT * max(1, sum(client.nthreads().values()))
            more = shipping(client) if shipping is not None else (lambda chunk: ())
            pending = iter(chunks)
            index_of = {client.submit(task, chunk, job, *more(chunk), pure=False): index
                        for index, chunk in itertools.islice(pending, window)}
            running = as_completed(list(index_of))
            for future in running:
                outcomes, records = future.result()  # a worker's JudgeUnavailableError raises here
                if recordings is not None and records:
                    recordings.append(records)  # as each partition ends: a later failure loses none
                finished(index_of.pop(future), outcomes)
                for index, chunk in itertools.islice(pending, 1):
                    following = client.submit(task, chunk, job, *more(chunk), pure=False)
                    index_of[following] = index
                    running.add(following)
    except OSError as exc:
        raise InputError(f"cannot reach the Dask scheduler {scheduler} ({exc}). Start one "
                         "(dask scheduler; dask worker ADDRESS) or use --scheduler threads.") from None
    finally:
        if cluster is not None:
            cluster.close()
