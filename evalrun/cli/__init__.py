"""The `evalrun` command line (`main`): `run` and `verify` (`run`), `show` and its views (`show`),
on the root group curate's command line shares (`curate.cli.base`)."""
