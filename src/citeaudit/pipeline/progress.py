"""How far a batch has got: answers done of the total, partitions done of the total, answers per
second and the time left, on stderr (the command line) or as a widget (a notebook: `tqdm.auto`).

`run_batch(..., progress=True)` draws one; `progress=callable` is told instead, once per finished
partition, with its number of answers (a kept partition of a resumed batch counts as finished).
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any


class BatchProgress:
    """A progress bar over `answers` answers in `partitions` partitions: call it with each finished
    partition's number of answers. The rate and the time left are tqdm's (answers per second,
    smoothed), the partitions its postfix, e.g. `answers: 40%|████  | 120/300 [00:10<00:15,
    12.0answer/s, partitions=6/16]`."""

    def __init__(self, answers: int, partitions: int, file: Any = None) -> None:
        from tqdm.auto import tqdm

        self.partitions, self.done = partitions, 0
        self._bar = tqdm(total=answers, desc="answers", unit="answer", file=file or sys.stderr)
        self._bar.set_postfix_str(self._postfix(), refresh=False)

    def _postfix(self) -> str:
        return f"partitions={self.done}/{self.partitions}"

    def __call__(self, answers: int) -> None:
        self.done += 1
        self._bar.set_postfix_str(self._postfix(), refresh=False)
        self._bar.update(answers)

    def close(self) -> None:
        self._bar.close()

    def __enter__(self) -> BatchProgress:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()
