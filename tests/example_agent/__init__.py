"""A small example agent added through the public agent contract only (see test_agent.py)."""
