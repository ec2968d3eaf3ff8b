"""Fixtures of the labelling tests: `argilla_env` (the session's Argilla in the environment) is shared,
in tests/conftest.py."""
