"""Errors of the sandbox."""

from __future__ import annotations


class SandboxUnavailable(RuntimeError):
    """Code execution is refused: the sandbox cannot run here. The message names the fix.

    Never caught to fall back to running code outside the sandbox.
    """


class SandboxOwnerBusy(RuntimeError):
    """This owner already has its share of the sandbox's slots in use (SANDBOX_MAX_PER_OWNER):
    refused at once, so one API key cannot hold every slot while the others wait."""
