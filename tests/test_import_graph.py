"""The import graph of app/draftlight/: no cycles, and the layers import one way, as
docs/architecture.md states them (its ```layers block is read here).

app/draftlight/engine and app/draftlight/store run in the terminal and in tests without Qt; app/draftlight/ui reaches llama.cpp
and the hub only through them, on the worker thread. Every file is read with ast, so an import
inside a function counts as much as one at the top.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

APP = Path(__file__).resolve().parent.parent / "app" / "draftlight"
QT = {"PySide6", "PySide2", "PyQt5", "PyQt6", "qtpy"}
# The window talks to models and the hub only through draftlight.engine and draftlight.store.
NOT_IN_THE_WINDOW = {"llama_cpp", "huggingface_hub", "httpx", "httpx2"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(APP.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Every module `path` imports, at any depth, as absolute dotted names (a `from x import y`
    gives both x and x.y: y may be a module)."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path.parent)
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            names |= {base} | {f"{base}.{alias.name}" for alias in node.names}
    return names


def app_files(folder: str = "") -> list[Path]:
    return sorted((APP / folder).rglob("*.py"))


def import_graph() -> dict[str, set[str]]:
    """Module -> the app modules it imports. Edges into a package's __init__ are left out: each
    `from draftlight import x` would otherwise be a cycle through app/__init__, which only names the
    version (the same rule as the project's tools/import_cycles.py)."""
    files = {module_name(p): p for p in app_files()}

    def known(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        targets = {known(t) for t in imports_of(path) if t.split(".")[0] == "draftlight"}
        graph[name] = {t for t in targets
                       if t and t != name and files[t].name != "__init__.py"}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def offending_imports(files: list[Path], forbidden: set[str]) -> list[str]:
    """'app/x.py imports PySide6' for each file and forbidden package it imports."""
    return [f"{path.relative_to(APP.parent).as_posix()} imports {package}"
            for path in files
            for package in sorted({name.split(".")[0] for name in imports_of(path)} & forbidden)]


def test_there_are_no_import_cycles_in_app():
    assert cycles(import_graph()) == []


def test_the_cycle_check_finds_a_cycle():
    # negative control: a check that never fires would pass the test above forever
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_engine_and_store_import_no_qt():
    assert app_files("engine") and app_files("store")
    assert offending_imports(app_files("engine") + app_files("store"), QT) == []


# Packages outside app/draftlight/ui that drive the real window: screenshots and recordings of it, and the
# benchmarks of what the flash, a full models folder and a year of use cost in it. Everything
# else runs without Qt.
DRIVE_THE_WINDOW = {"capture", "bench/flash_cost.py", "bench/model_scan_cost.py",
                    "bench/scale_child.py"}


def test_only_the_window_and_its_drivers_import_qt():
    # settings, paths, units, the CLIs and the other benchmarks run without Qt too; so does the
    # reply model the history stores, though it lives next to the widgets that show it
    outside = [p for p in app_files()
               if p.relative_to(APP).parts[0] != "ui"
               and not {p.relative_to(APP).parts[0], p.relative_to(APP).as_posix()} & DRIVE_THE_WINDOW]
    provenance = APP / "ui" / "flash" / "reply_builder.py"
    assert offending_imports(outside + [provenance], QT) == []


def test_ui_imports_neither_llama_cpp_nor_the_hub():
    assert app_files("ui")
    assert offending_imports(app_files("ui"), NOT_IN_THE_WINDOW) == []


# The window's rooms (app/draftlight/ui/ROOM/) and the rooms each may import; imports only go down:
# the chat window puts together replies (flash), the engine thread and the picker.
ROOMS_BELOW = {
    "chat": {"flash", "engine", "picker", "widgets"},
    "picker": {"widgets"},
    "engine": {"widgets"},  # the small widgets every room shares (a banner, the wheel guard)
    "flash": {"widgets"},
    "widgets": set(),
}


# The engine's rooms (app/draftlight/engine/ROOM/, each __init__ says what it holds), from the
# top: the engine in its own process, a reply, auto's policy, the step and its drafters,
# llama.cpp, the chat's text, the shared words; the server engines beside them.
ENGINE_ROOMS_BELOW = {
    "host": {"reply", "auto", "step", "llama", "text", "core"},
    "server": {"reply", "text", "core"},
    "reply": {"auto", "step", "llama", "text", "core"},
    "auto": {"step", "core"},
    "step": {"text", "core"},
    "llama": {"core"},
    "text": {"core"},
    "core": set(),
}


def room_of(module: str, package: str = "ui", rooms: dict = ROOMS_BELOW) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) >= 3 and parts[:2] == ["draftlight", package] \
        and parts[2] in rooms else None


def room_violations(graph: dict[str, set[str]], package: str = "ui",
                    rooms: dict = ROOMS_BELOW) -> list[str]:
    """'a -> b' for each import from one room of `package` into a room it may not import."""
    def room(module: str) -> str | None:
        return room_of(module, package, rooms)

    return [f"{source} -> {target}"
            for source, targets in graph.items() if room(source) is not None
            for target in sorted(targets)
            if room(target) not in (None, room(source), *rooms[room(source)])]


def test_every_module_of_the_window_is_in_a_room():
    # desktop.py, the app and its event loop, stands above the rooms
    loose = [name for name in import_graph() if name.startswith("draftlight.ui.")
             and room_of(name) is None and name != "draftlight.ui.desktop"]
    assert loose == []
    assert set(ROOMS_BELOW) == {p.name for p in (APP / "ui").iterdir()
                                if (p / "__init__.py").exists()}


def test_the_rooms_of_the_window_import_only_downwards():
    assert room_violations(import_graph()) == []


def test_the_room_check_finds_an_upward_import():
    # negative control: the strip (flash) reaching up into the chat window, and the picker into
    # the engine thread, are both reported
    graph = {"draftlight.ui.flash.strip": {"draftlight.ui.chat.main_window", "draftlight.ui.flash.palette"},
             "draftlight.ui.picker.dialog": {"draftlight.ui.engine.engine_worker", "draftlight.ui.widgets.banner"},
             "draftlight.ui.chat.main_window": {"draftlight.ui.picker.dialog"}}
    assert room_violations(graph) == ["draftlight.ui.flash.strip -> draftlight.ui.chat.main_window",
                                      "draftlight.ui.picker.dialog -> draftlight.ui.engine.engine_worker"]


def test_every_module_of_the_engine_is_in_a_room():
    loose = [name for name in import_graph() if name.startswith("draftlight.engine.")
             and room_of(name, "engine", ENGINE_ROOMS_BELOW) is None]
    assert loose == []
    assert set(ENGINE_ROOMS_BELOW) == {p.name for p in (APP / "engine").iterdir()
                                       if (p / "__init__.py").exists()}


def test_the_rooms_of_the_engine_import_only_downwards():
    assert room_violations(import_graph(), "engine", ENGINE_ROOMS_BELOW) == []


def test_the_engine_room_check_finds_an_upward_import():
    # negative control: the step reaching up into auto's policy is reported, down into core not
    graph = {"draftlight.engine.step.drafters": {"draftlight.engine.auto.adaptive",
                                                 "draftlight.engine.core.sampling"}}
    assert room_violations(graph, "engine", ENGINE_ROOMS_BELOW) == [
        "draftlight.engine.step.drafters -> draftlight.engine.auto.adaptive"]


def test_the_layer_check_sees_lazy_and_relative_imports(tmp_path, monkeypatch):
    # negative control: imports inside a function and relative ones are found too
    monkeypatch.setattr(sys.modules[__name__], "APP", tmp_path / "draftlight")
    (tmp_path / "draftlight" / "store" / "deep").mkdir(parents=True)
    (tmp_path / "draftlight" / "store" / "deep" / "late.py").write_text(
        "def f():\n    from PySide6.QtCore import QObject\n")
    (tmp_path / "draftlight" / "store" / "near.py").write_text("from . import deep\n")
    assert offending_imports(app_files("store"), QT) == ["draftlight/store/deep/late.py imports PySide6"]
    assert imports_of(tmp_path / "draftlight" / "store" / "near.py") == {"draftlight.store", "draftlight.store.deep"}


# --- the layers of docs/architecture.md -------------------------------------------------------

ARCHITECTURE = APP.parents[1] / "docs" / "architecture.md"
# From the store, the engine reads only GGUF headers.
NARROW = {("engine", "store"): {"draftlight.store.gguf_info"}}


def stated_layers(doc: str) -> list[set[str]]:
    """The doc's ```layers block, top to bottom: each line's packages (before two spaces)."""
    block = doc.split("```layers\n", 1)[1].split("```", 1)[0]
    return [{name.strip() for name in line.split("  ", 1)[0].split(",")}
            for line in block.splitlines() if line.strip()]


def package_of(module: str) -> str:
    """draftlight.engine.server.process -> engine; draftlight.launch -> launch."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "draftlight"


def layer_violations(graph: dict[str, set[str]], layers: list[set[str]]) -> list[str]:
    """'a -> b' for each import of a package from its own layer or one above it."""
    depth = {name: i for i, names in enumerate(layers) for name in names}
    found = []
    for source, targets in sorted(graph.items()):
        for target in sorted(targets):
            a, b = package_of(source), package_of(target)
            if a == b or b == "draftlight":
                continue
            if a not in depth or b not in depth:
                found.append(f"{source} -> {target} (a package the doc does not place)")
            elif depth[b] <= depth[a]:
                found.append(f"{source} -> {target}")
            elif (a, b) in NARROW and target not in NARROW[(a, b)]:
                found.append(f"{source} -> {target} (only {', '.join(sorted(NARROW[(a, b)]))})")
    return found


def test_every_arrow_between_packages_goes_down_the_documented_layers():
    layers = stated_layers(ARCHITECTURE.read_text(encoding="utf-8"))
    placed = set().union(*layers)
    on_disk = {p.stem if p.is_file() else p.name for p in APP.iterdir()
               if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").exists()}
    assert on_disk <= placed, f"not in docs/architecture.md's layers: {sorted(on_disk - placed)}"
    assert layer_violations(import_graph(), layers) == []


def test_the_layer_check_finds_an_upward_or_sideways_arrow():
    # negative control: the engine reaching up into the settings, the store into the engine, a
    # leaf into the store, and the engine into the store beyond GGUF headers are all reported
    layers = [{"settings"}, {"engine"}, {"store"}, {"paths", "modes"}]
    graph = {"draftlight.engine.reply.generator": {"draftlight.settings", "draftlight.store.gguf_info",
                                             "draftlight.store.history"},
             "draftlight.store.hub": {"draftlight.engine.core.errors", "draftlight.paths"},
             "draftlight.paths": {"draftlight.modes"},
             "draftlight.settings": {"draftlight.engine.core.errors"}}
    assert layer_violations(graph, layers) == [
        "draftlight.engine.reply.generator -> draftlight.settings",
        "draftlight.engine.reply.generator -> draftlight.store.history (only draftlight.store.gguf_info)",
        "draftlight.paths -> draftlight.modes",
        "draftlight.store.hub -> draftlight.engine.core.errors"]
