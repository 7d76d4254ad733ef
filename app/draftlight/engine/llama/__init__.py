"""llama.cpp: the one model backend (LlamaBackend), its rollback of recurrent states, its
vocabulary calls, the fast prompt read and the cache layout it needs, the CPU check that keeps
AMX kernels off a CPU they crash, and the prompt cache kept across a restart. May import `core`."""
