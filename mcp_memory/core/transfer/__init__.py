"""Memories that move: export to JSON Lines, import from it (file_format.py holds the format).

Why in core: moving between backends reads and writes through the ports, so one export and one
import serve every pair of stores (docs/backup_and_migration.md).
"""

from mcp_memory.core.transfer.exporting import ExportResult
from mcp_memory.core.transfer.file_format import FORMAT, FORMAT_VERSION, RecordRefused
from mcp_memory.core.transfer.importing import FileRefused, ImportResult, Refusal

__all__ = ["FORMAT", "FORMAT_VERSION", "ExportResult", "FileRefused", "ImportResult", "RecordRefused", "Refusal"]
