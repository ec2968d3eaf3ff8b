"""Readers and writers of the formats users bring and take away (BEIR, SQuAD, ragas)."""
