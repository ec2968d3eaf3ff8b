"""Evidence labelling in Argilla: candidate pools (`pool`), what a record shows and asks (`form`),
push and pull (`push`, `pull`, with the local `state`), applying answers (`apply`), agreement
(`agreement`), and a local Argilla server (`server`, the optional `argilla` extra)."""
