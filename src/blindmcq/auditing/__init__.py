"""What a bank gives away without its questions: the audit, the format profile, surface strategies."""
