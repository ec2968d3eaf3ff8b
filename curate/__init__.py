"""curate: build and guard versioned evaluation sets for RAG systems."""

__version__ = "0.1.0"
