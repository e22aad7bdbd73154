"""The release and the name it is installed by: a leaf, so any module can read them without
importing the package root (tests/test_layers.py keeps every import one way)."""

__version__ = "0.1.0"
#: The name it is installed by (`pip install mcp-tenant-memory`): the PyPI name `mcp-memory` is
#: another project's. The import package and the `mcp-memory` command keep their names.
DISTRIBUTION = "mcp-tenant-memory"


def install_hint(extra: str) -> str:
    """How to add an optional extra, as the README says it: from a checkout today, by the
    published name once the first release is out (it is not on PyPI before that)."""
    return f"from a checkout, pip install '.[{extra}]' (once released: pip install '{DISTRIBUTION}[{extra}]')"
