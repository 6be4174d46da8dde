"""``python -m blindmcq COMMAND ...``: the same as ``blindmcq COMMAND ...``."""

from blindmcq.cli import main

raise SystemExit(main())
