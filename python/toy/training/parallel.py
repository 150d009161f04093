"""Data parallelism over MPI: `mpiexec -n N toy-train ...`.

Every rank holds the same model and draws the same micro-batches; rank r
trains on its share of each step's micro-batches (N must divide
--grad-accum), the gradients and losses are summed over ranks, and every
rank applies the same AdamW update. Rank 0 alone prints and writes.

mpi4py is imported only when a launcher says there is more than one rank,
so toy without MPI, or with N = 1, runs as one process that never loads it.
A step's gradients cross between ranks as one float32 array (one
collective a step; Session.sum_gradients).

A rank that dies takes the job down: MPI's launcher ends the others (MPICH
prints which process died), a toy error on one rank is printed as
"toy-train: rank R: ...", and a sum that some rank never joins (a hung or
stopped rank, or a launcher that leaves the others running) ends after
TOY_MPI_TIMEOUT seconds (default 300) with one line naming the ranks that
do not answer rank 0, then MPI_Abort.
"""

from __future__ import annotations

import os
import signal
import sys
import time

import numpy as np

from ..core.errors import InputError
from ..core.launcher import launched_ranks

DEFAULT_TIMEOUT = 300.0
# message tags of rank 0's liveness check when a sum times out
_PING, _PONG = 31001, 31002


class Ranks:
    """This process's place among the ranks, and the collectives a step needs."""

    def __init__(self, comm):
        self.comm, self.rank, self.size = comm, comm.Get_rank(), comm.Get_size()
        self.timeout = float(os.environ.get("TOY_MPI_TIMEOUT", DEFAULT_TIMEOUT))
        self.step = 0
        # MPICH tells the surviving processes of a failed one with SIGUSR1
        # (when its launcher leaves them running)
        signal.signal(signal.SIGUSR1, lambda *_: self.fail("MPI reports that another rank failed"))

    def fail(self, message: str) -> None:
        print(f"toy-train: rank {self.rank}: {message}", file=sys.stderr, flush=True)
        time.sleep(1.0)  # the launcher forwards the line before the abort tears the job down
        self.comm.Abort(1)

    def begin_step(self, step: int) -> None:
        self.step = step  # for the messages

    def sum(self, array: np.ndarray) -> np.ndarray:
        """The element-wise sum of array over all ranks, or one line and
        MPI_Abort when it does not complete within the timeout. While waiting
        a rank answers rank 0's pings, so that rank 0 can then name the ranks
        that are not answering (dead, stopped, or stuck outside the sum)."""
        from mpi4py import MPI

        out = np.empty_like(array)
        request = self.comm.Iallreduce(array, out, op=MPI.SUM)
        deadline = time.monotonic() + self.timeout
        while not request.Test():
            self._answer_pings()
            if time.monotonic() > deadline:
                self._give_up()
            time.sleep(0.0005)
        return out

    def _answer_pings(self) -> None:
        from mpi4py import MPI

        status = MPI.Status()
        while self.comm.Iprobe(source=MPI.ANY_SOURCE, tag=_PING, status=status):
            self.comm.recv(source=status.Get_source(), tag=_PING)
            self.comm.send(self.rank, dest=status.Get_source(), tag=_PONG)

    def _silent_ranks(self, wait: float = 2.0) -> list[int]:
        """The ranks that do not answer a ping within `wait` seconds."""
        replies = {}
        for r in range(1, self.size):
            self.comm.isend(self.step, dest=r, tag=_PING)
            replies[r] = self.comm.irecv(source=r, tag=_PONG)
        answered = set()
        deadline = time.monotonic() + wait
        while len(answered) < len(replies) and time.monotonic() < deadline:
            answered |= {r for r, reply in replies.items() if r not in answered and reply.Test()}
            time.sleep(0.01)
        return [r for r in replies if r not in answered]

    def _give_up(self) -> None:
        if self.rank == 0:
            silent = self._silent_ranks()
            who = (
                f"rank{'s' if len(silent) > 1 else ''} {', '.join(map(str, silent))} "
                f"{'do' if len(silent) > 1 else 'does'} not answer"
                if silent
                else "every rank answers, yet the sum did not complete"
            )
        else:
            who = "another rank did not join"
        self.fail(
            f"step {self.step}: the gradient sum waited {self.timeout:g} s and {who} "
            "(a rank died or hangs); stopping every rank"
        )

    def any(self, flag: bool) -> bool:
        """Whether flag is true on any rank (every rank gets the same answer)."""
        return bool(self.sum(np.array([1.0 if flag else 0.0]))[0] > 0)


def world(args) -> Ranks | None:
    """The ranks when launched with more than one, else None. Checks that the
    run can be split: each rank takes --grad-accum / N micro-batches a step."""
    n = launched_ranks()
    if n <= 1:
        return None
    try:
        from mpi4py import MPI
    except ImportError:
        raise InputError(f"launched as {n} ranks, but mpi4py is not installed: pip install 'toy[mpi]'") from None
    ranks = Ranks(MPI.COMM_WORLD)
    if args.grad_accum % ranks.size:
        raise InputError(
            f"--grad-accum ({args.grad_accum}) must be a multiple of the {ranks.size} ranks: each "
            "rank trains on --grad-accum / N of each step's micro-batches"
        )
    return ranks
