"""Knowledge-base snapshots: documents chunked with source offsets (or production chunks taken as
they are), stored once per content under an id that is a hash of that content."""

from curate.kb.documents import chunk_documents, read_documents, read_production_chunks, sha256_text
from curate.kb.store import SnapshotStore, content_sha256, import_chunks, ingest, snapshot_id_of

__all__ = ["SnapshotStore", "chunk_documents", "content_sha256", "import_chunks", "ingest", "read_documents",
           "read_production_chunks", "sha256_text", "snapshot_id_of"]
