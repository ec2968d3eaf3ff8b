"""Evidence labelling in Argilla: a local server, pushing items, pulling labels, agreement."""
