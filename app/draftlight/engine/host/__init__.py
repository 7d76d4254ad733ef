"""The engine in a process of its own: the parent side (HostedEngine), the child, the typed
records that cross the pipe and how its lines are read. May import every room but `server`."""
