"""The guards: duplicate checks, leakage checks, splits and measured difficulty."""
