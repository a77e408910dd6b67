"""The coding agent's data probe: whether a message holds Python code or asks for some.

The coding agent's data is the code a user brings. Keywords find "write a function that ..."
and a pasted ``def``, but a short inline fragment ("explain what this does: [x for x in
range(20) if x % 3 == 0]"), code named in prose ("str.join vs += for 10k strings") or a request
with typos ("wirte a pyhton func ...") has no two keywords, resembles no example closely and fell
to the default agent (issue 28). The probe reads the message itself (no I/O, microseconds) and
scores three levels of evidence, each of which prose about anything else does not produce:

- ``CODE``: a Python construct written as code: a ``def`` / ``class`` header, a lambda, a
  comprehension, an import, a call of an attribute (``d.items()``), an attribute of a builtin
  type or a well-known module (``str.join``), or two code operators (``+=``, ``==``, ``->``);
- ``ABOUT``: the message names Python (also misspelt: one transposition, deletion or
  substitution away, e.g. "pyhton", "pythn") together with a programming artefact (a function,
  a class, a script, a list, a dict, ...);
- ``REQUEST``: a request for code that names no Python (issue 28: "write a decorator that
  retries", "flatten a nested list", "why does my recursive fibonacci hang"): a term that only
  programming uses (a decorator, recursion, a snippet, a regex, a nested list, "code up"), a
  function asked for by what it does ("a function to ...", "function that ..."), a script of
  the user's ("my script", "a script to"), or a module of Python's standard library or a
  well-known package used with an attribute (``requests.get``, ``itertools.chain``). The
  other agents' words in such a message ("meetings", "calories", "reminder") name the data the
  code works on, not a request to that agent.

A message about tests is the test-analysis agent's (its own probe scores pasted tests 1.0, above
``CODE``), so this probe skips (None) when the message talks about tests.
"""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agents.contract.context import RunContext

#: Above ROUTE_DATA_OVERRIDE (a weak keyword decision yields to it) and below the test-analysis
#: probe's 1.0 (a pasted test stays the test agent's).
CODE = 0.95
ABOUT = 0.85
#: At ROUTE_DATA_OVERRIDE's default: a weak keyword decision for another agent yields to it.
REQUEST = 0.8

_CONSTRUCTS = (
    re.compile(r"\b(?:async\s+)?def\s+[A-Za-z_]\w*\s*\("),  # def f(
    re.compile(r"\bclass\s+[A-Za-z_]\w*\s*[(:]"),  # class C: / class C(Base)
    re.compile(r"\blambda\b[\w\s,*=]*:"),  # lambda x: ...
    re.compile(r"[\[{(][^\]})]*?\bfor\s+\w+(?:\s*,\s*\w+)*\s+in\b[^\]})]*[\]})]"),  # [x for x in y]
    re.compile(r"^\s*(?:import\s+\w+|from\s+[\w.]+\s+import\s+\w+)", re.M),
    re.compile(r"(?:\b[A-Za-z_]\w*|['\")\]])\.[A-Za-z_]\w*\s*\("),  # d.items(, ' '.join(
    re.compile(
        r"\b(?:str|list|dict|set|tuple|bytes|int|float|os|sys|re|json|math|itertools|"
        r"collections|asyncio|np|pd|df)\.[a-z_]\w*"
    ),  # str.join, pd.merge
)
_OPERATOR = re.compile(r"(?<![^\s\w])(?:\+=|-=|\*=|/=|==|!=|->|:=|\*\*|//)(?![^\s\w])")

#: Programming artefacts: named together with Python they make a request about code.
_ARTEFACTS = frozenset(
    "function functions func funcs class classes method methods script scripts module modules "
    "loop loops list lists dict dicts dictionary dictionaries string strings regex csv json "
    "decorator decorators generator generators exception exceptions code program variable "
    "variables array arrays tuple tuples iterator async recursion recursive algorithm "
    "snippet oneliner one-liner library package".split()
)
#: Wording only a request about code uses (see ``REQUEST`` in the module docstring).
_PROGRAMMING = re.compile(
    r"\b(?:decorators?|recursion|recursive(?:ly)?|snippets?|regex(?:es)?|regexp|"
    r"one-?liners?|iterators?|memoi[sz]e\w*|nested\s+(?:lists?|dicts?|dictionar(?:y|ies)|"
    r"arrays?|json|loops?)|code\s+(?:up|me|something)|functions?\s+(?:to|that|which)|"
    r"an?\s+script\s+(?:to|that)|(?:my|this)\s+script)\b",
    re.IGNORECASE,
)
#: ``requests.get``, ``itertools.chain``: a standard-library module (or a well-known package)
#: with an attribute, written as code in prose (no call parentheses needed).
_MODULES = frozenset(sys.stdlib_module_names) | {
    "requests", "numpy", "pandas", "httpx", "flask", "django", "fastapi", "pydantic", "pytest",
}  # fmt: skip
_DOTTED = re.compile(r"(?<![\w.])([a-z_][a-z0-9_]*)\.[a-z_]\w*(?![\w.])")
_TESTS = re.compile(
    r"\b(?:tests?|testing|pytest|unittest|testcase|smells?|assert\w*|fixtures?|mocks?)\b", re.I
)
_WORD = re.compile(r"[a-z][a-z-]*")


def _near(word: str, target: str) -> bool:
    """``word`` is ``target`` or one edit away (a transposition, deletion, insertion or
    substitution): "pyhton", "pythn", "pyton" are "python"."""
    if word == target:
        return True
    if abs(len(word) - len(target)) > 1 or len(target) < 5:
        return False
    if len(word) == len(target):
        diff = [i for i, (a, b) in enumerate(zip(word, target, strict=True)) if a != b]
        if len(diff) == 1:
            return True
        return (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and word[diff[0]] == target[diff[1]]
            and word[diff[1]] == target[diff[0]]
        )
    short, long = (word, target) if len(word) < len(target) else (target, word)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def code_evidence(message: str) -> float | None:
    """``CODE``, ``ABOUT``, ``REQUEST`` or None (no evidence, or a message about tests); see
    the module."""
    text = message[:20_000]
    if _TESTS.search(text):
        return None
    if any(p.search(text) for p in _CONSTRUCTS) or len(_OPERATOR.findall(text)) >= 2:
        return CODE
    tokens = _WORD.findall(text.lower())
    if any(_near(t, "python") for t in tokens) and _ARTEFACTS.intersection(tokens):
        return ABOUT
    if _PROGRAMMING.search(text) or any(m in _MODULES for m in _DOTTED.findall(text)):
        return REQUEST
    return None


async def holds_code(message: str, context: RunContext) -> float | None:
    """The router's data tier for the coding agent (see the module docstring)."""
    return code_evidence(message)
