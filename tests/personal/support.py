"""Helpers of the personal-agent tests: a deterministic embedding and fixed clocks."""

from __future__ import annotations

import hashlib
import math
import re
from datetime import datetime
from zoneinfo import ZoneInfo

from langchain_core.embeddings import Embeddings

_WORD = re.compile(r"[a-z0-9]+")

#: Wednesday 12 March 2025, 10:00 in Berlin: the "now" of the request table.
BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2025, 3, 12, 10, 0, tzinfo=BERLIN)


class HashEmbeddings(Embeddings):
    """Bag-of-words vectors by hashing (stemmed to 5 letters): texts sharing words are close.

    Deterministic and instant, for tests where the meaning of words does not matter.
    """

    dimension = 64

    def _vector(self, text: str) -> list[float]:
        vec = [0.0] * self.dimension
        for word in _WORD.findall(text.lower()):
            digest = hashlib.blake2b(word[:5].encode(), digest_size=8).digest()
            vec[int.from_bytes(digest[:4], "little") % self.dimension] += 1.0
        norm = math.sqrt(sum(x * x for x in vec)) or 1.0
        return [x / norm for x in vec]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)
