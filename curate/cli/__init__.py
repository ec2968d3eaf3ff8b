"""The `curate` command line (`main`): thin commands over the library, one module per capability,
and the base both command lines share (`base`: one-line errors, exit codes, --workspace, --debug)."""
