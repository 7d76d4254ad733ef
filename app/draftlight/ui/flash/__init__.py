"""A reply as the window shows it: accepted draft runs highlighted and flashing in, Markdown, the
acceptance strip, the colour key and the statistics footer."""
