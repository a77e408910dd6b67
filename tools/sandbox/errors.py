"""Errors of the sandbox."""

from __future__ import annotations


class SandboxUnavailable(RuntimeError):
    """Code execution is refused: the sandbox cannot run here. The message names the fix.

    Never caught to fall back to running code outside the sandbox.
    """
