"""Formats items come in and go out in: users' JSONL/CSV (`raw`), BEIR, SQuAD/CMRC2018, ragas rows,
and Hugging Face datasets (`hf`: the release card and Parquet)."""
