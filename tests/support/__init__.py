"""Test support: private servers, the scripted chat model, the OpenAI-compatible stub server."""
