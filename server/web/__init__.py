"""The hosting service's web application: REST API, OpenAPI document, metrics, home page."""

from .service import Service
from .settings import SETTINGS, ServiceSettings, Setting

__all__ = ["SETTINGS", "Service", "ServiceSettings", "Setting"]
