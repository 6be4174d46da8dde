"""Tasks: each is a dataset, a presenter (items -> model requests), a parser (response -> answer) and a
scorer, run through the engine (``blindmcq.engine``)."""
