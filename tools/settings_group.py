"""The base of every settings group (a leaf: pydantic and the standard library only).

A group is one capability's (or the server's) settings: a pydantic model whose fields read the
environment variable ``env_prefix`` + the field name in upper case, unless a field names its
variable(s) in ``validation_alias``. `config.Settings` composes the groups.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict


class SettingsGroup(BaseModel):
    """A group of settings; subclasses set ``env_prefix`` and declare their fields."""

    model_config = ConfigDict(extra="forbid", validate_default=True, populate_by_name=True)
    #: Environment variable of a field = this prefix + the field name in upper case, unless
    #: the field names its variable(s) in `validation_alias`.
    env_prefix: ClassVar[str] = ""
