"""The serving process's side of the Claude Code hooks (docs/hooks.md#how-it-is-fast): the
question on the wire (wire.py), where the socket, its starting marker and the sessions' state
live (folder.py), the listening socket (listener.py) and the answer (answers.py). The hook
process (cli/hooks/) imports wire.py and folder.py, so this package holds nothing and they
import only the standard library.
"""
