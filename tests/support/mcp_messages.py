"""The raw JSON-RPC opening a test sends a stdio server by hand (where the SDK's client would hide
the bytes under test): the initialize request and the notification that follows it."""

from __future__ import annotations

from typing import Any

#: The initialize request (id 1) of a minimal client.
INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
#: The notification a client sends once initialize is answered.
INITIALIZED: dict[str, Any] = {"jsonrpc": "2.0", "method": "notifications/initialized"}
