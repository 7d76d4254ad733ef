"""The engine's shared words: its errors, the Backend protocol a model gives a step, sampling
and its parameters, how a model is loaded (LoadOptions), and the cache of what is measured on
this machine. Imports nothing else of the engine."""
