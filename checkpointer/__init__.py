"""A LangGraph checkpoint saver on plain Redis (no modules), sync and async."""
