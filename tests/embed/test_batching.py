import threading

import pytest

from satchel import InvalidInputError
from satchel.embed._batching import RunPool, plan_batches


def test_every_batch_runs_once_across_the_threads() -> None:
    pool = RunPool(3)
    batches = plan_batches([5, 1, 9, 3, 3, 7, 2, 8], batch_size=1)
    seen: list[list[int]] = []
    threads: set[str] = set()
    lock = threading.Lock()

    def work(batch: list[int]) -> None:
        with lock:
            seen.append(batch)
            threads.add(threading.current_thread().name)

    pool.run(batches, work)
    assert sorted(map(tuple, seen)) == sorted(map(tuple, batches))
    assert threading.current_thread().name in threads
    assert len(threads) > 1


def test_width_one_runs_everything_on_the_calling_thread() -> None:
    names: list[str] = []
    RunPool(1).run([[0], [1], [2]], lambda _: names.append(threading.current_thread().name))
    assert names == [threading.current_thread().name] * 3


def test_an_error_in_a_worker_is_raised_after_every_share_has_ended() -> None:
    done: list[int] = []
    lock = threading.Lock()

    def work(batch: list[int]) -> None:
        if batch == [1]:
            raise InvalidInputError("run 1 failed")
        with lock:
            done.append(batch[0])

    with pytest.raises(InvalidInputError, match="run 1 failed"):
        RunPool(2).run([[0], [1], [2], [3]], work)
    # Share 0 (batches 0 and 2) ran on the caller; share 1 stopped at its first batch.
    assert sorted(done) == [0, 2]
