"""The local Argilla server process: `python -m curate.annotate.server DATA_DIR HOST PORT PARENT_PID`."""

import sys

from curate.annotate.server.process import main

sys.exit(main(sys.argv[1:]))
