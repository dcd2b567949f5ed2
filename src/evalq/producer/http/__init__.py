"""The producer API over HTTP: `HttpClient` and `AsyncHttpClient` need a base URL and an API key.

For a service that should hold no database or broker credentials. They make the same calls as
`evalq.service.client.Client` and raise the same errors (docs/api.md, 'The HTTP client'), and
import neither Celery nor SQLAlchemy nor torch: ``pip install evalq`` is enough.
"""

from evalq.producer.http.aio import AsyncHttpClient
from evalq.producer.http.sync import HttpClient
from evalq.service.submitted import Submitted

__all__ = ["AsyncHttpClient", "HttpClient", "Submitted"]
