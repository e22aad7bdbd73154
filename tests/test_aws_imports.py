"""The AWS SDK stays out of every deployment that does not use AWS.

A static scan: no module of the package imports boto3 or botocore when it is
itself imported, except the AWS backend's own modules (imported only when the
S3 backend is chosen), the Bedrock embedder and search_docs. Imports inside a
function, or under `if TYPE_CHECKING:`, run only when needed and are allowed.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "mcp_memory"
AWS_MODULES = {"boto3", "botocore"}


def allowed(path: Path) -> bool:
    relative = path.relative_to(PACKAGE).as_posix()
    return relative.startswith("stores/s3/") or relative in ("embedders/bedrock.py", "server/protocol/search_docs.py")


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def import_time_imports(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, module) of every import that runs when the module is imported."""
    found: list[tuple[int, str]] = []

    def visit(statements: list[ast.stmt]) -> None:
        for node in statements:
            if isinstance(node, ast.Import):
                found.extend((node.lineno, alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.append((node.lineno, node.module))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue  # runs when called, not when imported
            elif isinstance(node, ast.If) and _is_type_checking(node.test):
                visit(node.orelse)
            elif isinstance(node, ast.ClassDef):
                visit(node.body)  # a class body runs at import time
            elif isinstance(node, ast.Try):
                visit(node.body)
                for handler in node.handlers:
                    visit(handler.body)
                visit(node.orelse)
                visit(node.finalbody)
            else:  # if / with / for / while at module level
                visit(getattr(node, "body", []))
                visit(getattr(node, "orelse", []))

    visit(tree.body)
    return found


def test_no_module_outside_the_aws_backend_imports_boto3_or_botocore_when_imported() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if allowed(path):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, module in import_time_imports(tree):
            if module.split(".")[0] in AWS_MODULES:
                offenders.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {module}")
    assert offenders == []


def test_the_scan_sees_imports_at_module_level_and_ignores_deferred_ones() -> None:
    source = (
        "import os\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import botocore.client\n"
        "try:\n    import boto3\nexcept ImportError:\n    boto3 = None\n"
        "class Client:\n    from botocore.config import Config\n"
        "def later():\n    import botocore.session\n"
    )
    assert [m for _, m in import_time_imports(ast.parse(source))] == ["os", "typing", "boto3", "botocore.config"]


def test_the_aws_backend_modules_are_the_only_exemptions() -> None:
    exempt = sorted(p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py") if allowed(p))
    assert exempt == [
        "embedders/bedrock.py",
        "server/protocol/search_docs.py",
        "stores/s3/__init__.py",
        "stores/s3/errors.py",
        "stores/s3/objects.py",
        "stores/s3/startup.py",
        "stores/s3/store.py",
    ]
