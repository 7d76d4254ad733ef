"""The desktop window (PySide6), in rooms: chat (the window and the conversation), flash (a reply
as shown: highlighted runs, the flash, the strip, its statistics), engine (the thread that owns
the engine, and loading models), picker (finding, downloading and managing models) and widgets
(small pieces several rooms use). Imports neither llama_cpp nor huggingface_hub: the engine runs
on the worker thread in draftlight.ui.engine.engine_worker and is reached only through signals."""
