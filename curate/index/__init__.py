"""One index per KB snapshot (see kb_index.KBIndex)."""
