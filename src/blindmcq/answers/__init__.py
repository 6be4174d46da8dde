"""The answers of a run: one PredictionRecord per model call, and the predictions files."""
