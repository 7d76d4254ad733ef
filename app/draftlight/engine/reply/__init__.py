"""A reply: Engine.generate and its steps, the events it yields, the protocol the window, chat
and bench drive, Compare, and the notes on rollback and cancelling. May import `auto`, `step`,
`llama`, `text` and `core`."""
