"""llama.cpp RPC: the other machines a model is split over, each running rpc-server.

Addresses are HOST:PORT. What llama-server put where comes from its log (`-lv 4`); what an
rpc-server lends, from the device list it prints.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

from draftlight.engine.core.errors import EngineError


def is_loopback_host(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Device:
    """A device of this machine that an rpc-server can lend, as it lists it."""
    name: str  # ggml's name, what --device takes: "CPU", "CUDA0", "Metal", "Vulkan0"
    description: str  # "AMD EPYC", "NVIDIA GeForce RTX 4090"
    total_mib: int  # the memory it offers (rpc-server reports the total to llama-server)
    free_mib: int

    def __str__(self) -> str:
        return f"{self.name} ({self.description}, {self.total_mib} MiB)"


_DEVICE_LINE = re.compile(r"^\s+(\S+): (.*) \((\d+) MiB, (\d+) MiB free\)\s*$")
_NO_SUCH_DEVICE = "draftlight-lists-devices"


def rpc_devices(binary: str | Path) -> list[Device]:
    """The devices `binary` (rpc-server) can lend. It has no option that lists them, but given a
    device it does not know it prints them all and exits (tools/rpc/rpc-server.cpp,
    get_devices); [] if it printed none."""
    try:
        out = subprocess.run([str(binary), "--device", _NO_SUCH_DEVICE], check=False,
                             capture_output=True, text=True, timeout=60, errors="replace")
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [Device(found[1], found[2], int(found[3]), int(found[4]))
            for found in map(_DEVICE_LINE.match, out.stdout.splitlines()) if found]


def lent_devices(devices: list[Device]) -> list[Device]:
    """Those rpc-server lends when no --device names them: every accelerator, else the CPU
    (get_devices in tools/rpc/rpc-server.cpp)."""
    return [d for d in devices if d.name != "CPU"] or [d for d in devices if d.name == "CPU"]


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


_BUFFER = re.compile(r"(\S+)\s+(model|KV|compute|output) buffer size =\s*([\d.]+) MiB")
_RPC_DEVICE = re.compile(r"RPC\d+\[(.+)\]$")
_LAYERS = re.compile(r"\bn_layer\s+=\s+(\d+)")
HERE = "this machine"


def placement(log) -> str:
    """What llama-server put on each machine, from its latest start's log (`-lv 4`), e.g.
    "127.0.0.1:50161: 16 of 30 layers, 59 MiB · 127.0.0.1:50162: 14 of 30 layers, 82 MiB ·
    this machine: 32 MiB"; "" when nothing went to another machine.

    Memory is the model, KV cache and compute buffers together. llama.cpp logs no layer
    count per device; every layer of a KV cache holds the same share of it, so a device's
    layers are its share of the KV cache times the model's layers (a model whose layers differ,
    sliding-window or recurrent, gets an estimate)."""
    lines = list(log)
    starts = [i for i, line in enumerate(lines) if line.startswith("$ ")]
    memory: dict[str, float] = {}
    kv: dict[str, float] = {}
    layers = 0
    for line in lines[starts[-1] + 1:] if starts else lines:
        if found := _LAYERS.search(line):
            layers = int(found.group(1))
        if found := _BUFFER.search(line):
            device, kind, mib = found.groups()
            rpc = _RPC_DEVICE.match(device)
            where = rpc.group(1) if rpc else HERE
            memory[where] = memory.get(where, 0.0) + float(mib)
            if kind == "KV":
                kv[where] = kv.get(where, 0.0) + float(mib)
    if not any(where != HERE for where in memory):
        return ""
    kv_total = sum(kv.values())
    parts = []
    for where in sorted(memory, key=lambda w: w == HERE):  # this machine last
        share = (f"{round(layers * kv[where] / kv_total)} of {layers} layers, "
                 if layers and kv_total and where in kv else "")
        parts.append(f"{where}: {share}{memory[where]:.0f} MiB")
    return " · ".join(parts)
