"""One index per KB snapshot (see kb_index.KBIndex): folded texts with a character 4-gram index,
BM25, dense embeddings, and the snapshot's duplicate-chunk groups."""
