"""A serving process's next recall after `mcp-memory forget` (another process) in its tenant
(bench/RESULTS.md, "A million memories in one tenant, both backends").

    PYTHONPATH=CODE CODE=CODE .venv/bin/python -m bench.scale.forget_reload FILE

CODE: the checkout to measure (the CLI forget runs it too). The service recalls twice, the CLI
forgets its top hit, then the service recalls twice more. Prints one JSON object (seconds).
"""

import asyncio
import json
import os
import sys

from bench.harness.timing import Stopwatch

QUESTION = "the deploy pipeline"


async def timed(service, caller):
    with Stopwatch() as recalling:
        answer = await service.recall(caller, QUESTION)
    return answer, round(recalling.last, 3)


async def main(db: str) -> None:
    from mcp_memory.app import open_service
    from mcp_memory.config import Settings
    from mcp_memory.core.model import Caller

    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "DATABASE_URL", "RECALL_"))}
    env.update({"MEMORY_DB_PATH": db, "RATE_LIMIT_PER_TENANT": "100000"})
    service = await open_service(Settings.from_env(env))
    try:
        await service.embedder.warm_up()
        caller = Caller("bench")
        _, first = await timed(service, caller)
        answer, warm = await timed(service, caller)
        target = answer.results[0].memory.id
        with Stopwatch() as forgetting:
            cli = await asyncio.create_subprocess_exec(
                os.path.join(os.path.dirname(sys.executable), "mcp-memory"),
                "forget",
                target,
                "--tenant",
                "bench",
                env={**os.environ, "MEMORY_DB_PATH": db, "PYTHONPATH": os.environ.get("CODE", "")},
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
            )
            code = await cli.wait()
        forget = round(forgetting.last, 2)
        answer, after = await timed(service, caller)
        _, again = await timed(service, caller)
        result = {
            "first recall s": first,
            "warm recall s": warm,
            "cli forget s": forget,
            "cli rc": code,
            "recall after forget s": after,
            "next recall s": again,
            "forgotten gone": target not in [h.memory.id for h in answer.results],
            "load": os.getloadavg()[0],
        }
        print(json.dumps(result))
    finally:
        await service.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
