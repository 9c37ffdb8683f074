"""translator/tree_index.py: the one walk that answers the passes' whole-tree questions gives what walking the tree
for each question gives, on real files (recompat's own sources and examples, and MONAI's networks where installed)."""
from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

from recompat.translator import tree_index

REPO = Path(__file__).resolve().parents[1]
SCOPES = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def real_files() -> list[Path]:
    files = sorted((REPO / "translator").glob("*.py")) + sorted((REPO / "examples").rglob("*.py"))
    spec = importlib.util.find_spec("monai")
    if spec is not None and spec.submodule_search_locations:
        files += sorted((Path(list(spec.submodule_search_locations)[0]) / "networks" / "blocks").glob("*.py"))
    return files


def preorder(node: ast.AST):
    yield node
    for child in ast.iter_child_nodes(node):
        yield from preorder(child)


def scope_bindings(scope: ast.AST) -> list[ast.AST]:
    """What binds in a scope, found the slow way: its body walked in source order, not into nested scopes (whose
    own node is yielded: it binds its name here) nor into a class body."""
    body = scope.body if isinstance(scope.body, list) else [scope.body]
    found = []

    def walk(node):
        if isinstance(node, tree_index.BINDERS):
            found.append(node)
        if not isinstance(node, NESTED):
            for child in ast.iter_child_nodes(node):
                walk(child)
    for stmt in body:
        walk(stmt)
    return found


@pytest.mark.parametrize("path", real_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_index_answers_as_walking_the_tree_does(path):
    tree = ast.parse(path.read_bytes())
    index = tree_index.index(tree)
    assert tree_index.index(tree) is index, "built once per tree"
    walked = list(preorder(tree))
    for kinds in [(ast.Call,), (ast.Name,), (ast.ClassDef,), (ast.Assign, ast.AnnAssign, ast.AugAssign),
                  (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)]:
        assert index.of(*kinds) == [n for n in walked if type(n) in kinds], kinds
    for owner in (n for n in walked if isinstance(n, NESTED)):
        inner = [n for n in preorder(owner) if n is not owner]
        assert index.inside(owner, ast.Assign, ast.Attribute) == [
            n for n in inner if type(n) in (ast.Assign, ast.Attribute)]
    for scope in (n for n in walked if isinstance(n, SCOPES)):
        assert index.bindings(scope) == scope_bindings(scope), getattr(scope, "name", type(scope).__name__)


def test_bindings_follow_python_scopes():
    tree = ast.parse(
        "import a\n"
        "class C:\n"
        "    x = 1\n"                       # a class body binds in no scope here
        "    def m(self, y=(z := 2)):\n"    # the default is not m's
        "        w = [v for v in y]\n"      # a comprehension's variable counts as m's
        "        f = lambda q: (r := q)\n"
        "def g():\n"
        "    global a\n")
    index = tree_index.index(tree)
    cls, g = tree.body[1], tree.body[2]
    method = cls.body[1]
    lam = method.body[1].value
    kinds = lambda scope: [type(n).__name__ for n in index.bindings(scope)]
    assert kinds(tree) == ["Import", "ClassDef", "FunctionDef"]
    assert kinds(method) == ["Assign", "comprehension", "Assign"]
    assert kinds(lam) == ["NamedExpr"]
    assert kinds(g) == ["Global"]
    assert [n.targets[0].id for n in index.inside(cls, ast.Assign)] == ["x", "w", "f"]
