"""How much a memory injection may hold: the token budget, the character ceiling, the number of
memories and the start of a prompt that recall reads (docs/hooks.md#budget).

The hooks' questions and the recall-context prompt are held to these, so it is one of server/'s
own files, beside the rooms that share it. The hook process reads this module, so it imports nothing.
"""

from __future__ import annotations

#: MEMORY_HOOK_BUDGET: the most a hook injects, in estimated tokens (core/digest.py estimate_tokens).
DEFAULT_BUDGET = 1500
BUDGET_MIN = 300
#: Claude Code saves hook output over 10,000 characters to a file and shows a preview instead
#: (docs/hooks.md#budget): 3,000 tokens of three bytes stays under it.
BUDGET_MAX = 3000
#: And whatever the estimate says, an injected text is never longer than this.
CONTEXT_CHARS_MAX = 9500
#: MEMORY_HOOK_LIMIT: at most this many memories on one prompt.
DEFAULT_LIMIT = 3
LIMIT_MAX = 10
#: MEMORY_HOOK_TOOL_BUDGET: the most a tool hook injects for one call, in estimated tokens; tool
#: calls come often, so less than a prompt's (docs/hooks.md#at-the-moment-of-action).
DEFAULT_TOOL_BUDGET = 600
TOOL_BUDGET_MIN = 100
#: At most this many memories for one tool call (or MEMORY_HOOK_LIMIT, when that is lower).
TOOL_LIMIT = 2
#: How a tool hook's text that stops the call begins (context.py writes it; the hook's events.py
#: then answers with a permission decision whose reason is the text: docs/hooks.md#stopped-before-it-runs).
STOP_PREFIX = "[MEMORY] Stopped before this call ran:"
#: Recall reads the start of a long prompt: the embedder reads 256 tokens, and recall refuses
#: a query over 32,000 bytes; this many characters keep the question and stay far below it.
QUERY_CHARS = 2000


def query_of(prompt: str) -> str:
    """What recall is asked for a prompt: its start, QUERY_CHARS characters at most."""
    return prompt.strip()[:QUERY_CHARS]
