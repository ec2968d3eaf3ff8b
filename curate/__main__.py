"""`python -m curate ...`: the `curate` command line, for an environment without the console script."""

from curate.cli.main import main

if __name__ == "__main__":
    main()
