"""The guards: duplicate checks, leakage checks, splits, measured difficulty and consistency."""
