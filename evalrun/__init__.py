"""evalrun: run a RAG system over one release and score every layer apart."""

__version__ = "0.1.0"
