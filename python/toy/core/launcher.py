"""What an MPI launcher (mpiexec, srun) tells each process it starts: its
rank and the number of ranks, through the environment. Read without mpi4py,
so that toy without MPI never imports it."""

from __future__ import annotations

import os

# what launchers set: MPICH/Hydra (PMI_*), Open MPI, Slurm's srun
RANK_VARIABLES = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID")
SIZE_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS")


def _first_number(names: tuple[str, ...], default: int) -> int:
    for name in names:
        value = os.environ.get(name, "")
        if value.isdigit():
            return int(value)
    return default


def launched_rank() -> int:
    """This process's rank as the launcher set it (0 when not launched by one)."""
    return _first_number(RANK_VARIABLES, 0)


def launched_ranks() -> int:
    """How many ranks the launcher started (1 when not launched by one)."""
    return _first_number(SIZE_VARIABLES, 1)
