"""The `curate` command line (`main`): thin commands over the library, one module per capability,
and the base both command lines share (`base`: one-line errors, exit codes, --workspace, --debug;
`display`: tables that keep Chinese aligned). evalrun's command line takes these from here; the
library (`import curate`) never loads them."""

from curate.cli.base import CONTEXT, CommandGroup, EXIT_ERROR, EXIT_FINDINGS, EXIT_INTERNAL, ToolGroup, root_options, workspace_of
from curate.cli.display import console, short, table

__all__ = ["CONTEXT", "CommandGroup", "EXIT_ERROR", "EXIT_FINDINGS", "EXIT_INTERNAL", "ToolGroup", "console", "root_options", "short",
           "table", "workspace_of"]
