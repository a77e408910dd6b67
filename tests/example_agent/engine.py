"""The units capability's engine (its ``tools/<cap>`` part): a table of length factors and
each owner's conversion history. A real capability opens a database or a sandbox here."""

from __future__ import annotations

from dataclasses import dataclass, field

TO_METRES = {"km": 1000.0, "m": 1.0, "mi": 1609.344, "miles": 1609.344, "ft": 0.3048}


@dataclass
class LengthTable:
    """Length factors, and what each owner converted (scoped by owner)."""

    factors: dict[str, float] = field(default_factory=lambda: dict(TO_METRES))
    history: dict[str, list[str]] = field(default_factory=dict)

    def convert(self, owner: str, value: float, source: str, target: str) -> float:
        result = value * self.factors[source] / self.factors[target]
        self.history.setdefault(owner, []).append(f"{value:g} {source} -> {target}")
        return result
