"""A training run: its directory, checkpoints, events and plots, the step loop
(training_run), the LR schedule, data parallelism."""
