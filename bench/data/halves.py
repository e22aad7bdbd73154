"""Which half of a dev set a question belongs to: "fit" (what a model may be fitted or tuned on) or
"test" (what is reported). One rule for every set, fixed before anything was fitted:

    half(key) = "fit" when the first byte of sha256(key) is even, else "test"

where the key is the set's name and the question's id, `<set>:<id>` (for MADial-Bench, the
dialogue's position in its file, counted from 0; the dialogue asked with its gold memories taken
out, an absent question, goes with its dialogue). A hash, not positions, so that a set's order
and its later additions move no question from one half to the other. The built-in calibration
set (mcp_memory/data/calibration_builtin.jsonl) is never fitted on: all of it is a test set.
"""

from __future__ import annotations

import hashlib
from typing import Literal

Half = Literal["fit", "test"]
#: The dev sets a model may be fitted on (their fit halves), by the name the key uses.
SETS = ("project", "madial", "conversations", "conversations-absent", "updates", "long-chats", "prompts")


def half(set_name: str, question_id: str | int) -> Half:
    """The half the question `question_id` of the dev set `set_name` belongs to."""
    if set_name not in SETS:
        raise ValueError(f"unknown dev set {set_name!r}; one of {', '.join(SETS)}")
    digest = hashlib.sha256(f"{set_name}:{question_id}".encode()).digest()
    return "fit" if digest[0] % 2 == 0 else "test"
