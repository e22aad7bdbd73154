"""The two processes: serve-stdio (stdio.py, over its line transport stdio_transport.py) and
serve-http (http.py), and what both print and close (boot.py)."""
