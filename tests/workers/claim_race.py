"""One claimant of the claim race: claims every queued match it can, as fast as it can.

``python claim_race.py URL NAME SEED`` waits for ``GO`` on stdin (so both claimants start
together), tries ``claim_match`` on every queued match in a seeded random order and prints
the ids it won, one per line.
"""

from __future__ import annotations

import asyncio
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from server.store import MatchStatus, Store  # noqa: E402
from server.workers.claims import Claimed, claim_match  # noqa: E402


async def main(url: str, name: str, seed: int) -> None:
    store = Store(url)
    await store.open()
    queued = await store.list_matches(status=MatchStatus.QUEUED, limit=100_000)
    random.Random(seed).shuffle(queued)
    print("READY", flush=True)
    sys.stdin.readline()
    won = []
    for number, match in enumerate(queued):
        outcome = await claim_match(store, match, worker=name, job_id=number)
        if isinstance(outcome, Claimed):
            won.append(match.id)
    await store.close()
    print("\n".join(won), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
