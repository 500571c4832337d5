"""``python -m labkit``: the commands of :mod:`labkit.commands.cli` (``python -m labkit --help`` lists them)."""

from labkit.commands.cli import main

raise SystemExit(main())
