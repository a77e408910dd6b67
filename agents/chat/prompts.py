"""Prompts of the chat agent."""

from __future__ import annotations

CHAT_SYSTEM = """You are Switchyard's general assistant. Answer the user directly and concisely.

Other agents handle specialised requests; when a request belongs to one of them, call its
transfer tool instead of answering:
{agents}"""

NO_MODEL_ANSWER = """No language model is configured (LLM_PROVIDER={provider}), so I cannot hold \
an open conversation. {routing}

These agents work without a model. To have one of them answer your message, {how}, or word it \
like the agent's example:
{capabilities}

To chat freely, set OPENAI_API_KEY (or DEEPSEEK_API_KEY, with OPENAI_BASE_URL for another \
OpenAI-compatible server) or run Ollama, then restart the service."""

#: Without a model, a message whose answer another agent found confidently in the user's own
#: data (the knowledge base's best passage): the answer, how sure, and where more comes from.
DATA_ANSWER = """No language model is configured (LLM_PROVIDER={provider}), so this is quoted \
from your documents: the best passage matched your message at {score:.2f} (answers are given \
from {threshold:.2f}, {setting}).

{text}

_The {agent} agent answered this without a model; to ask it directly, {how}._"""

NO_AGENT_MATCHED = "Your message did not clearly match any agent."

#: One line per specialist in the offline answer: what it does and the exact request to send.
ASK_AGENT = """- {name}: {description}
  Ask it: {request}{example}"""

#: How to ask an agent by name, per client (`RunContext.client`): what works where the user is.
ASK_HOW = {
    "rest": "send it again with the agent's name in `agent` (POST /chat)",
    "agent_server": "talk to it with the agent's name as the assistant id (in agent-chat-ui: "
    "the Assistant / Graph ID, `?assistantId=<name>` in its address; with langgraph-sdk: the "
    "run's `assistant_id`)",
    None: "send it again with the agent's name in `target_agent` (the graph's input, e.g. in "
    "LangGraph Studio)",
}
