"""What leaves a run: the Markdown and HTML report, MLflow tracking and the release."""
