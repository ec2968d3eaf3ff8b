"""`python -m evalrun`: the `evalrun` command, for when the console script is not on the path."""

from evalrun.cli.main import main

if __name__ == "__main__":
    main()
