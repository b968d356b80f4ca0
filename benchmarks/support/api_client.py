"""Queues matches through a service's REST API from a process of its own.

The hosting benchmarks measure the server's CPU time; a client queuing hundreds of
matches from inside the server's process would add its own requests' cost (aiohttp's
client, JSON, the semaphore) to that figure.  This script posts the matches instead and
exits once every ``POST /api/matches`` was answered ``201``; it prints its own CPU time.

``python benchmarks/support/api_client.py BASE TOKEN`` with a JSON object on standard input:
``{"bodies": [match request, ...], "at_once": 8}``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any


async def post_all(base: str, token: str, bodies: list[dict[str, Any]], at_once: int) -> None:
    """POST every body to ``base/api/matches``, ``at_once`` at a time; fail on any non-201."""
    import aiohttp

    posting = asyncio.Semaphore(at_once)
    headers = {"Authorization": f"Bearer {token}"}
    async with aiohttp.ClientSession(headers=headers) as session:

        async def post(body: dict[str, Any]) -> None:
            async with posting, session.post(f"{base}/api/matches", json=body) as response:
                if response.status != 201:
                    raise RuntimeError(f"{response.status}: {await response.text()}")

        await asyncio.gather(*(post(body) for body in bodies))


def main() -> int:
    base, token = sys.argv[1:3]
    spec = json.loads(sys.stdin.read())
    started = time.process_time()
    try:
        asyncio.run(post_all(base, token, spec["bodies"], int(spec.get("at_once", 8))))
    except Exception as error:
        print(f"queuing failed: {error}", file=sys.stderr)
        return 1
    print(f"client cpu {time.process_time() - started:.3f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
