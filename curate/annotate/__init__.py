"""Evidence labelling in Argilla: candidate pools (`pool`), what a record shows and asks (`form`),
push and pull (`push`, `pull`, with the local `state`), making and repairing Argilla datasets and
turning a lost server into one line (`remote`), applying answers (`apply`), agreement
(`agreement`), disputes settled in their own dataset (`adjudication`), users (`users`), and a local
Argilla server (`server`, the optional `argilla` extra)."""
