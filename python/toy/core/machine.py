"""What this machine can hold: a configuration whose planned memory exceeds
it is refused with the figures, before anything is allocated (the
out-of-memory killer gives no message, and may take other work with it)."""

from __future__ import annotations

import os

from .errors import InputError

MB = 2**20


def _meminfo_available() -> int | None:
    """MemAvailable from /proc/meminfo (Linux)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _cgroup_room() -> int | None:
    """What the cgroup (v2) this process runs in still lets it take, if limited."""
    try:
        with open("/sys/fs/cgroup/memory.max") as f:
            limit = f.read().strip()
        if limit == "max":
            return None
        with open("/sys/fs/cgroup/memory.current") as f:
            return max(int(limit) - int(f.read().strip()), 0)
    except (OSError, ValueError):
        return None


def _physical() -> int | None:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def available_bytes() -> int | None:
    """The memory a new allocation can take here without swapping: the
    least of MemAvailable, the cgroup's room and (where neither is known)
    the physical memory; None where nothing is known."""
    known = [b for b in (_meminfo_available(), _cgroup_room()) if b is not None]
    if not known:
        known = [b for b in (_physical(),) if b is not None]
    return min(known) if known else None


def check_fits(need: int, what: str, fix: str) -> None:
    """Refuse (InputError) when `what` needs more than is available.
    need: bytes, a lower estimate (so that nothing that fits is refused)."""
    available = available_bytes()
    if available is not None and need > available:
        raise InputError(
            f"{what} needs at least {need / MB:,.0f} MB and this machine has {available / MB:,.0f} MB available: {fix}"
        )
