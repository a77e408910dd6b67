"""Prompts of the chat agent."""

from __future__ import annotations

CHAT_SYSTEM = """You are Switchyard's general assistant. Answer the user directly and concisely.

Other agents handle specialised requests; when a request belongs to one of them, call its
transfer tool instead of answering:
{agents}"""

NO_MODEL_ANSWER = """No language model is configured (LLM_PROVIDER={provider}), so I cannot hold \
an open conversation. {routing}

What Switchyard can do without a model:
{capabilities}

To chat freely, set OPENAI_API_KEY (or DEEPSEEK_API_KEY, with OPENAI_BASE_URL for another \
OpenAI-compatible server) or run Ollama, then restart the service."""

NO_AGENT_MATCHED = "Your message did not clearly match any agent."
