"""Runs of the window from the command line without a screen: --screenshot (a PNG) and --record (an
animated GIF)."""
