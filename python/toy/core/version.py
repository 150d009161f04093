"""toy's version (pyproject.toml's [project] version), read by --version and
recorded in each run's config.json."""

__version__ = "0.1.0"
