"""Text for matching: normalisation and folding, near-verbatim containment, sentences, salient tokens."""
