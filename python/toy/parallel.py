"""Data parallelism over MPI: `mpiexec -n N toy-train ...`.

Every rank holds the same model and draws the same micro-batches; rank r
trains on its share of each step's micro-batches (N must divide
--grad-accum), the gradients and losses are summed over ranks, and every
rank applies the same AdamW update. Rank 0 alone prints and writes.

mpi4py is imported only when a launcher says there is more than one rank,
so toy without MPI, or with N = 1, runs exactly as before.

A rank that dies takes the job down: MPI's launcher ends the others (MPICH
prints which process died), a toy error on one rank is printed as
"toy-train: rank R: ...", and a sum that some rank never joins (a hung or
stopped rank, or a launcher that leaves the others running) ends after
TOY_MPI_TIMEOUT seconds (default 300) with one line naming the ranks that
did not arrive, then MPI_Abort.
"""
from __future__ import annotations

import os
import signal
import sys
import time

import numpy as np

from .corpus import InputError

# what launchers set: MPICH/Hydra (PMI_SIZE), Open MPI, Slurm's srun
SIZE_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS")
DEFAULT_TIMEOUT = 300.0


RANK_VARIABLES = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID")


def launched_rank() -> int:
    """This process's rank as the launcher set it (0 when not launched by one)."""
    for name in RANK_VARIABLES:
        value = os.environ.get(name, "")
        if value.isdigit():
            return int(value)
    return 0


def launched_ranks() -> int:
    for name in SIZE_VARIABLES:
        value = os.environ.get(name, "")
        if value.isdigit():
            return int(value)
    return 1


class Ranks:
    """This process's place among the ranks, and the collectives a step needs."""

    def __init__(self, comm):
        self.comm, self.rank, self.size = comm, comm.Get_rank(), comm.Get_size()
        self.timeout = float(os.environ.get("TOY_MPI_TIMEOUT", DEFAULT_TIMEOUT))
        self.step = 0
        self._sums = 0            # collectives so far: the tag of each one's arrival messages
        # MPICH tells the surviving processes of a failed one with SIGUSR1
        # (when its launcher leaves them running)
        signal.signal(signal.SIGUSR1, lambda *_: self.fail("MPI reports that another rank failed"))

    def fail(self, message: str) -> None:
        print(f"toy-train: rank {self.rank}: {message}", file=sys.stderr, flush=True)
        self.comm.Abort(1)

    def begin_step(self, step: int) -> None:
        self.step = step       # for the messages

    def sum(self, array: np.ndarray) -> np.ndarray:
        """The element-wise sum of array over all ranks, or one line and MPI_Abort
        when some rank does not join within the timeout. Each rank first tells
        rank 0 it has arrived, so that rank 0 can name the ranks that did not."""
        from mpi4py import MPI

        self._sums += 1
        tag = self._sums % 32000
        if self.rank == 0:
            arrivals = [(r, self.comm.irecv(source=r, tag=tag)) for r in range(1, self.size)]
        else:
            arrivals = [(0, self.comm.isend(self.step, dest=0, tag=tag))]
        out = np.empty_like(array)
        request = self.comm.Iallreduce(array, out, op=MPI.SUM)
        deadline = time.monotonic() + self.timeout
        while not request.Test():
            if time.monotonic() > deadline:
                missing = [r for r, a in arrivals if not a.Test()] if self.rank == 0 else []
                who = (f"rank{'s' if len(missing) > 1 else ''} {', '.join(map(str, missing))} did not reach it"
                       if missing else "another rank did not join")
                self.fail(f"step {self.step}: the gradient sum waited {self.timeout:g} s and {who} "
                          "(a rank died or hangs); stopping every rank")
            time.sleep(0.0005)
        for _, arrival in arrivals:      # matched before the sum completed: no wait
            arrival.wait()
        return out

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
        raise InputError(f"--grad-accum ({args.grad_accum}) must be a multiple of the {ranks.size} ranks: each "
                         "rank trains on --grad-accum / N of each step's micro-batches")
    return ranks
