"""The desktop window (PySide6). Imports neither llama_cpp nor huggingface_hub: the engine runs on
the worker thread in app.ui.worker and is reached only through signals."""
