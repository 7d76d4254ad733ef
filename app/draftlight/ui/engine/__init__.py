"""The one thread that owns the engine, what it needs to open models, which models are loaded, the
model bar and the bar a load shows, and serving them on localhost."""
