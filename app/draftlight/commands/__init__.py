"""The `draftlight` sub-commands, one module each: its argparse options and what it runs.
The dispatcher is draftlight/cli.py; the window is draftlight/ui/."""
