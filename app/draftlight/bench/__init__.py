"""`draftlight bench`: speed and losslessness per task category and mode."""
