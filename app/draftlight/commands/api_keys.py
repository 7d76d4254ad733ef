"""Where `serve`, `chat` and `bench` read an API key: --api-key KEY, --api-key-file PATH, or the
DRAFTLIGHT_API_KEY environment variable, in that order. A command line can be read by every user
of the machine (ps, /proc/PID/cmdline); a file of the user's and the environment cannot."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from draftlight.user_messages import UserError

KEY_VARIABLE = "DRAFTLIGHT_API_KEY"


def add_api_key_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    """--api-key and --api-key-file; `what` says what the key is for."""
    parser.add_argument("--api-key", metavar="KEY",
                        help=f"{what}; other users of this machine can read a command line: "
                             f"prefer --api-key-file or ${KEY_VARIABLE}")
    parser.add_argument("--api-key-file", metavar="PATH", type=Path,
                        help=f"read the key from this file (else from ${KEY_VARIABLE})")


def api_key_from(args: argparse.Namespace) -> str | None:
    """The key the command was given, or None.

    Raises:
        UserError: both options, an unreadable file, or an empty key."""
    if args.api_key is not None and args.api_key_file is not None:
        raise UserError("--api-key and --api-key-file: give one, not both")
    if args.api_key_file is not None:
        try:
            key = args.api_key_file.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise UserError(f"--api-key-file {args.api_key_file}: "
                            f"{getattr(exc, 'strerror', None) or exc}") from None
        if not key:
            raise UserError(f"--api-key-file {args.api_key_file} is empty")
        if "\n" in key:
            raise UserError(f"--api-key-file {args.api_key_file} holds more than one line: "
                            "write only the key")
        return key
    if args.api_key is not None:
        if not args.api_key.strip():
            raise UserError("--api-key is empty")
        return args.api_key
    return os.environ.get(KEY_VARIABLE, "").strip() or None  # set but empty: no key
