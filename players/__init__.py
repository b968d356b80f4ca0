"""GGP players: the player's side of the protocol and the bundled players.

Write a player by subclassing :class:`players.base.Player` and serve it with
:class:`players.agent.PlayerAgent` (an aiohttp application) or
:func:`players.serve.serve`. Bundled players are listed in :mod:`players.registry`
and served from the command line with ``python -m players NAME --port N`` or
``ggp player NAME --port N``.
"""
