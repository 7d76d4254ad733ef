"""Auto mode: its policy (AdaptiveDrafter), the acceptance it expects, the cost curve of batched
passes it prices drafts on, what it learns, and the measurements behind them (batch drift,
verify speed). May import `step` and `core`."""
