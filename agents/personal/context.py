"""What the personal agents share: the runtime context their tools receive, the handoff
decision, the result an agent returns, and the agent's state schema.

The user id and the services reach a tool through LangGraph's runtime context
(`ToolRuntime.context`), never through a model-supplied argument, so a model cannot act for
another user by naming them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal, NotRequired

from langchain.agents import AgentState
from pydantic import BaseModel, Field

from tools.personal.dates import local_now, zone

if TYPE_CHECKING:
    from langgraph.store.base import BaseStore

    from tools.personal.service import PersonalService
    from tools.personal.webhooks import WebhookSender

Domain = Literal["task", "food", "event"]
DOMAINS: tuple[Domain, ...] = ("task", "food", "event")


@dataclass
class PersonalContext:
    """The runtime context of one personal-agent turn (LangGraph `context=`).

    `timezone` is the user's zone for this request (the setting's default or a per-request
    option); `now` pins the clock (tests, replays). `memory` is the long-term store of facts
    about the user (LangGraph's `AsyncPostgresStore`); without it the graph's own store, if
    any, is used.
    """

    user_id: str
    service: PersonalService
    timezone: str = "UTC"
    now: datetime | None = None
    webhooks: WebhookSender | None = None
    memory: BaseStore | None = None
    default_hour: int = 9
    facts: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.user_id or len(self.user_id) > 200:
            raise ValueError("user_id must be 1-200 characters")
        zone(self.timezone)
        if not 0 <= self.default_hour <= 23:
            raise ValueError("default_hour must be 0-23")

    def clock(self) -> datetime:
        """The current time in the user's zone."""
        return local_now(self.timezone, self.now)


class HandoffDecision(BaseModel):
    """Whether this turn belongs to another personal agent, which one, why, and what it needs
    to carry on (`context`: e.g. the subject and time of the task just created)."""

    should_handoff: bool = False
    target_agent: Domain | None = None
    reason: str = ""
    context: dict[str, Any] = Field(default_factory=dict)


class ToolCallRecord(BaseModel):
    """A tool call made during the turn and whether it succeeded."""

    name: str
    args: dict[str, Any]
    ok: bool = True


class PersonalAgentResult(BaseModel):
    """What a personal agent hands back to the graph for one turn.

    - `answer`: the text for the user; `method`: `llm` or `interpreter`;
    - `handoff`: store it in state and route it through the root graph's bounded handoff path;
    - `context`: the agent's consolidated domain context, to keep in `agent_contexts[agent]`
      and pass back next turn (e.g. the last list shown, so "mark the second one done" works);
    - `tool_calls` and `data` (the tools' structured results) for the API and for tests.
    """

    agent: Domain
    answer: str
    method: Literal["llm", "interpreter"]
    handoff: HandoffDecision = Field(default_factory=HandoffDecision)
    context: dict[str, Any] = Field(default_factory=dict)
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    data: list[dict[str, Any]] = Field(default_factory=list)


def merge_context(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Reducer of the domain context: keys written later win, others are kept."""
    return {**(left or {}), **(right or {})}


class PersonalAgentState(AgentState[Any]):
    """The state of a personal agent's subgraph: the conversation plus its private fields."""

    domain_context: NotRequired[Annotated[dict[str, Any], merge_context]]
    """The consolidated domain context (in at the start of the turn, updated by tools)."""
    handoff: NotRequired[dict[str, Any] | None]
    """A `HandoffDecision` (as a dict) set by a transfer tool or the domain-shift check."""
    incoming: NotRequired[dict[str, Any] | None]
    """The handoff this agent received from another one (its `HandoffDecision`), if any."""
    facts: NotRequired[list[str]]
    """Long-term facts about the user, loaded from the store at the start of the turn."""
    answer: NotRequired[str]
    """The turn's answer text."""
    method: NotRequired[str]
    """`llm` or `interpreter`."""
