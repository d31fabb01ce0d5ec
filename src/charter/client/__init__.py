"""Client and AsyncClient (:mod:`charter.client.client`) and their faces, one module each."""

from charter.client.client import AsyncClient, Client

__all__ = ["AsyncClient", "Client"]
