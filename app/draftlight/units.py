"""Sizes and durations as people read them, the same in the terminal, the window and errors.

Sizes are decimal SI (1 kB = 1000 B), as Hugging Face and file managers show file sizes, so a
size here matches the one on the model's hub page. A leaf module: it imports nothing of the app.
"""

from __future__ import annotations

_UNITS = ("B", "kB", "MB", "GB", "TB")


def format_bytes(n: float) -> str:
    """950 B, 3.1 MB, 1.2 GB: one decimal from a kilobyte up, none for bytes."""
    scaled, unit = float(n), _UNITS[0]
    for bigger in _UNITS[1:]:
        # 999,960 B is "1.0 MB", not "1000.0 kB": move up before rounding would reach 1000
        if abs(scaled) < (999.5 if unit == "B" else 999.95):
            break
        scaled, unit = scaled / 1000, bigger
    return f"{scaled:.0f} B" if unit == "B" else f"{scaled:.1f} {unit}"


def format_duration(seconds: float) -> str:
    """m:ss, or h:mm:ss from an hour up (an ETA)."""
    seconds = int(seconds + 0.5)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def format_count(n: int) -> str:
    """950, 12.3k, 4.5M: downloads and likes as the hub shows them."""
    for limit, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if n >= limit:
            return f"{n / limit:.1f}".rstrip("0").rstrip(".") + suffix
    return str(n)


def format_age(when, now) -> str:
    """'today', '3 days ago', '5 months ago', '2 years ago' (two aware datetimes)."""
    days = max((now - when).days, 0)
    for size, unit in ((365, "year"), (30, "month"), (7, "week"), (1, "day")):
        if days >= size:
            count = days // size
            return f"{count} {unit}{'s' if count > 1 else ''} ago"
    return "today"
