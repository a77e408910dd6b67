"""How the router finds the coding agent: its description, keywords and example requests.

Plain data (no import of the graph spine), for the agent's registration.
"""

from __future__ import annotations

NAME = "coding"
DESCRIPTION = (
    "Writes, checks, runs and fixes Python functions (pandas data work) in a sandbox; checks "
    "and runs pasted code, and explains Python errors and tracebacks."
)
KEYWORDS = (
    # Request phrasings overlap on purpose: "write a function that ..." alone is two hits, so
    # it reaches the agent by keyword (the router needs two distinct keywords).
    "write a function",
    "write a function that",
    "a function to",
    "function that",
    "implement a function",
    "write code",
    "code that",
    "write a python function",
    "python function",
    "generate code",
    "fix this code",
    "fix my code",
    "debug",
    "traceback",
    "run this code",
    "check this code",
    "dataframe",
    "pandas",
    "def ",
    "```python",
    "Traceback (most recent call last)",
)
EXAMPLES = (
    "Write a function that returns the total amount per region of a DataFrame",
    "Write a Python function that removes duplicate rows and sorts by date",
    "Why does this code raise KeyError: 0?",
    "Check this function: def total(df): return df.amount.sum()",
    "Traceback (most recent call last): ... ValueError: The truth value of a Series is ambiguous",
    "Run my pandas function on this data",
)
