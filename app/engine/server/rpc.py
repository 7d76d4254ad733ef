"""llama.cpp RPC: the other machines a model is split over, each running rpc-server.

Addresses are HOST:PORT. What llama-server put where comes from its log (`-lv 4`).
"""

from __future__ import annotations

import ipaddress
import re
import socket

from app.engine.errors import EngineError


def is_loopback_host(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def rpc_addresses(text: str) -> tuple[str, ...]:
    """"a:1, b:2" -> ("a:1", "b:2"), each checked (EngineError otherwise)."""
    return tuple(check_rpc_address(a) for a in text.split(",") if a.strip())


def check_rpc_address(address: str) -> str:
    """`address` if it is HOST:PORT, else EngineError saying what is expected."""
    address = address.strip()
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise EngineError(f"{address!r} is not a machine's address: write it as HOST:PORT "
                          f"(e.g. 192.168.1.20:50052)")
    return address


def unreachable(addresses: tuple[str, ...], timeout: float = 1.0) -> list[str]:
    """Those of `addresses` (HOST:PORT) that do not accept a connection within `timeout`."""
    gone = []
    for address in addresses:
        host, _, port = address.rpartition(":")
        try:
            socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
        except (OSError, ValueError):
            gone.append(address)
    return gone


def no_longer_answer(gone: list[str]) -> str:
    """"(a:1 no longer answers)": how a reply's error names the machines that went away."""
    return f"({', '.join(gone)} no longer answer{'s' if len(gone) == 1 else ''})"


_GONE = re.compile(r"\(([^()]+) no longer answers?\)")


def machines_gone(message: str) -> tuple[str, ...]:
    """The machines an error names with no_longer_answer(), so the window can offer to go on
    without them; () when it names none."""
    match = _GONE.search(message)
    if not match:
        return ()
    try:
        return rpc_addresses(match.group(1))
    except EngineError:
        return ()


def device_lines(log) -> list[str]:
    """What went where, from llama-server's log: per device its layers and buffers."""
    keep = ("offloaded", "model buffer size", "KV buffer size", "compute buffer size")
    return [line.split(" I ", 1)[-1].strip() for line in log
            if any(k in line for k in keep)]
