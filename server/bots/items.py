"""The items of the player checker's report card (no imports: the CLI lists them cheaply)."""

ITEMS: dict[str, str] = {
    "info": "INFO is answered with a name and a status",
    "start": "START is answered ready within the start clock",
    "first-play": "the first PLAY, with NIL, is answered with a legal move",
    "second-start": "a second START while in a match is answered busy",
    "unknown-match": "PLAY for a match id the player does not know is answered busy",
    "legal-moves": "every later move of a game never seen before is legal",
    "stop": "STOP at the end is answered done",
    "play-clock": "every move arrives within the play clock: thinking time plus network latency",
    "scrambled": "a match with every symbol renamed on the wire is played legally",
    "abort": "ABORT in the middle of a match is answered aborted within 1 s",
    "start-after-abort": "after ABORT, START with a new match id is answered ready and played",
    "keyword-case": "messages with keywords in any case (play, Play, nil) are understood",
}
"""Every item the checker knows, in the order it checks them."""
