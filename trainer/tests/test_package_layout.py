"""The trainer's layering, read from its source: no module imports itself back through others
(function-level imports included, since a lazy import is still a circle), and each subpackage
imports only the ones below it. The order is the one trainer/README.md describes."""
from __future__ import annotations

import ast
from pathlib import Path

import vistool_trainer

PACKAGE = Path(vistool_trainer.__file__).parent
# Lower layers first; a subpackage may import its own modules and any layer before it.
LAYERS = ["checkout", "config", "algorithms", "model", "engines", "rollouts", "trainers", "run"]


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    here = module_name(path).split(".")
    if path.name != "__init__.py":
        here = here[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("vistool_trainer."):
                found.add(target)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("vistool_trainer.")}
    return found


def import_graph() -> dict[str, set[str]]:
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    return {name: {target for target in imports_of(path) if target in modules} for name, path in modules.items()}


def test_no_module_imports_itself_back():
    graph = import_graph()
    cycles = []

    def visit(name: str, trail: list[str]) -> None:
        for target in sorted(graph[name]):
            if target in trail:
                cycles.append(trail[trail.index(target):] + [target])
            elif len(trail) < len(graph):
                visit(target, trail + [target])

    for start in sorted(graph):
        visit(start, [start])
    assert not cycles, "import circles: " + "; ".join(" → ".join(cycle) for cycle in cycles[:5])


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else None


def test_each_layer_imports_only_layers_below_it():
    wrong = []
    for module, targets in import_graph().items():
        layer = layer_of(module)
        if layer is None:
            continue
        for target in targets:
            other = layer_of(target)
            if other is not None and LAYERS.index(other) > LAYERS.index(layer):
                wrong.append(f"{module} imports {target}")
    assert not wrong, "\n".join(sorted(wrong))


def test_every_module_sits_in_a_layer():
    loose = [name for name in import_graph() if layer_of(name) is None and name not in ("vistool_trainer", "vistool_trainer.__main__")]
    assert not loose, f"modules outside the layers {LAYERS}: {loose}"
