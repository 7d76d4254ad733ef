"""What the picker's tests share besides their fixture (make_dialog, in tests/ui/conftest.py)."""

TIMEOUT_MS = 15_000
MiB, GiB, GB = 1 << 20, 1 << 30, 1_000_000_000
