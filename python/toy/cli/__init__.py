"""The command lines: toy-train (train), toy-generate (generate), toy-train plot (plot)."""
