"""A training run: its directory, checkpoints, events and plots, the step loop
(loop), the LR schedule, data parallelism."""
