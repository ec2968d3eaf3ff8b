"""What the tests share besides fixtures: where the tiny data lives, local servers, evalrun targets."""

from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data"
EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples"
