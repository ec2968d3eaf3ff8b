"""The judge: any OpenAI-compatible endpoint, asked for JSON verdicts, with every failure kept as data."""
