"""What the frozen app runs: the same `draftlight` command as the console script."""

from draftlight.cli import main

raise SystemExit(main())
