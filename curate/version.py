"""The version of curate."""

__version__ = "0.1.0"
