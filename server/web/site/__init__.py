"""The web pages: live matches, replays, players and games, drawn by the browser from JSON.

:func:`add_site` adds the pages, their JSON and event streams and the static files to the
application; everything is served by the application itself (no CDN).
"""

from .hub import LiveHub
from .views import add_site

__all__ = ["LiveHub", "add_site"]
