"""The general chat agent: the default route, and the one that knows what the others do."""
