"""Memories that move: export to JSON Lines, import from it (records.py holds the format)."""

from mcp_memory.core.transfer.exporting import ExportResult
from mcp_memory.core.transfer.importing import FileRefused, ImportResult, Refusal
from mcp_memory.core.transfer.records import FORMAT, FORMAT_VERSION, RecordRefused

__all__ = ["FORMAT", "FORMAT_VERSION", "ExportResult", "FileRefused", "ImportResult", "RecordRefused", "Refusal"]
