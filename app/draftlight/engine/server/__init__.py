"""Server engines: llama.cpp's own llama-server (built, started and stopped by Draftlight) and
any OpenAI-compatible server, behind the same events as the in-process engine (server_engine.py)."""
