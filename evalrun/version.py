"""The version of evalrun."""

__version__ = "0.1.0"
