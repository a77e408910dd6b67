"""The coding tools: generate, check, test (in the sandbox) and analyse Python functions.

- `CodingToolkit` (toolkit.py): the four tools over their dependencies; typed entry points for
  REST handlers (`check`, `test`, `generate`, `analyze`) and LangChain tools for agents
  (`tools()`); every call is logged and counted in `CodingMetrics`.
- schemas.py: `GenerateCodeInput/Output`, `CheckCodeInput/Output`, `TestCodeInput/Output`,
  `AnalyzeErrorInput/Output`, `ExecutionSpec`, `CodeIssue`, `TestData`.
- The engines, usable alone: `static_check.check_code`, `execute.execute_code`,
  `generate.generate_code`, `diagnose.analyze_error` / `analyze_with_rules`, and
  `extract` (code blocks, imports, pasted code).
"""

from tools.coding.metrics import CodingMetrics
from tools.coding.schemas import (
    AnalyzeErrorInput,
    AnalyzeErrorOutput,
    CheckCodeInput,
    CheckCodeOutput,
    CodeIssue,
    CodingResult,
    ExecutionSpec,
    GenerateCodeInput,
    GenerateCodeOutput,
    TestCodeInput,
    TestCodeOutput,
    TestData,
)
from tools.coding.toolkit import CodingToolkit

__all__ = [
    "AnalyzeErrorInput",
    "AnalyzeErrorOutput",
    "CheckCodeInput",
    "CheckCodeOutput",
    "CodeIssue",
    "CodingMetrics",
    "CodingResult",
    "CodingToolkit",
    "ExecutionSpec",
    "GenerateCodeInput",
    "GenerateCodeOutput",
    "TestCodeInput",
    "TestCodeOutput",
    "TestData",
]
