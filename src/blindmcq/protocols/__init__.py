"""Answer protocols beyond a single label (Matched-and-Dashed, few-shot) and the embeddings they use."""
