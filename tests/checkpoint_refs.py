"""The sweep tests' oracle: references to a checkpoint API that a translated file still holds.

Deliberately independent of the translator and of mappings/: its own list of the checkpoint APIs of torch and
of third-party training libraries, and its own import resolution (relative imports included). A reference is
a dotted name (or an import) that resolves to one of them, or a call of a method that switches checkpointing
on a model. It counts as reported when its statement has a `# recompat:` comment line just above it.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

# Qualified names: the name itself and everything under it. Written from each library's documentation and
# sources, not from recompat's data, so that a name the data forgets shows up here.
CHECKPOINT_APIS = (
    # torch
    "torch.utils.checkpoint",
    "torch.distributed.algorithms._checkpoint",
    "torch.distributed._composable.checkpoint_activation",
    "torch.distributed._composable.checkpoint",
    # DeepSpeed (deepspeed.checkpointing is the public alias of the runtime module)
    "deepspeed.checkpointing",
    "deepspeed.runtime.activation_checkpointing.checkpointing",
    # Megatron-core (tensor_parallel re-exports random's names)
    "megatron.core.tensor_parallel.checkpoint",
    "megatron.core.tensor_parallel.random.checkpoint",
    "megatron.core.tensor_parallel.CheckpointWithoutOutput",
    "megatron.core.tensor_parallel.random.CheckpointWithoutOutput",
    "megatron.core.tensor_parallel.random.CheckpointFunction",
    # Transformer Engine
    "transformer_engine.pytorch.checkpoint",
    "transformer_engine.pytorch.distributed.checkpoint",
    # fairscale
    "fairscale.nn.checkpoint",
    "fairscale.nn.checkpoint_wrapper",
    "fairscale.nn.misc.checkpoint_activations",
)
# Methods that switch checkpointing on a model object of another library (Hugging Face models).
CHECKPOINT_METHODS = ("gradient_checkpointing_enable",)


@dataclass(frozen=True)
class Reference:
    path: str
    line: int          # 1-based, in the scanned (translated) file
    name: str          # the qualified name, or `.method` for a method switch
    notes: tuple[str, ...]   # the `# recompat:` comment lines just above its statement

    @property
    def reported(self) -> bool:
        return bool(self.notes)


def _is_api(qual: str) -> bool:
    return any(qual == api or qual.startswith(api + ".") for api in CHECKPOINT_APIS)


def _module_of(path: Path, root: Path) -> list[str]:
    """The file's package as a list of names; `root` is a package folder itself or a folder of packages."""
    top = root.parent if (root / "__init__.py").is_file() else root
    return list(path.relative_to(top).parts[:-1])   # a module's package, or an __init__'s own


def _bindings(tree: ast.Module, package: list[str]) -> tuple[dict, list]:
    """{bound name: qualified name} over every import of the file (any scope), and the imports that resolve."""
    bound, imports = {}, []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                bound[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
                if _is_api(a.name):
                    imports.append((node, a.name))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1] if node.level > 1 else package
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            for a in node.names:
                qual = f"{module}.{a.name}"
                bound[a.asname or a.name] = qual
                if _is_api(qual):
                    imports.append((node, qual))
    return bound, imports


def _chain(node) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(parts)]


def _notes(lines: list[str], stmt: ast.stmt) -> tuple[str, ...]:
    notes, i = [], stmt.lineno - 2
    while i >= 0 and lines[i].strip().startswith("#"):
        if lines[i].strip().startswith("# recompat:"):
            notes.append(lines[i].strip())
        i -= 1
    return tuple(notes)


def scan_file(path: Path, root: Path) -> list[Reference]:
    text = path.read_text(encoding="utf-8", errors="surrogateescape")
    tree = ast.parse(text)
    lines = text.splitlines()
    bound, imports = _bindings(tree, _module_of(path, root))
    found: list[tuple[ast.stmt, str]] = [(stmt, qual) for stmt, qual in imports]

    def visit(node, stmt):
        if isinstance(node, ast.stmt):
            stmt = node
        if isinstance(node, (ast.Attribute, ast.Name)):
            chain = _chain(node)
            if chain and chain[0] in bound:
                qual = ".".join([bound[chain[0]], *chain[1:]])
                if _is_api(qual):
                    found.append((stmt, qual))
                    return          # one reference per dotted name
            if isinstance(node, ast.Attribute) and node.attr in CHECKPOINT_METHODS:
                found.append((stmt, "." + node.attr))
        for child in ast.iter_child_nodes(node):
            visit(child, stmt)

    visit(tree, None)
    rel = str(path.relative_to(root))
    return [Reference(rel, stmt.lineno, name, _notes(lines, stmt)) for stmt, name in found]


def scan_tree(root: Path) -> list[Reference]:
    refs = []
    for path in sorted(root.rglob("*.py")):
        if path.is_file():
            try:
                refs += scan_file(path, root)
            except SyntaxError:
                continue   # the translator leaves a file it cannot parse as it was; counted apart
    return refs
