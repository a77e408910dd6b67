"""The coding agent: a ReAct agent that writes, checks, runs (in the sandbox) and fixes Python.

For the graph spine and the app layer (wiring, no other module needed):
- `build_coding_graph(model | None, toolkit, default_max_iterations=...)`: the compiled
  subgraph over `CodingState` (react.py); `build_coding_agent` is its with-model half;
  `recursion_limit_for(max_iterations)` the recursion limit a run needs.
- `run_coding(spec, test_data, model=..., toolkit=..., settings=..., max_iterations=...)`:
  one request -> `CodingResult` (the six fields; run.py) — `POST /code/generate`.
- `review_pasted(message, toolkit, test_data=...)`: chat without a model: says generation needs
  one, checks / runs / explains pasted code or tracebacks (pasted.py).
- `routing.NAME / DESCRIPTION / KEYWORDS / EXAMPLES`: for the router's registration.
- `coding_agent()`: the `AgentSpec` (spec.py): the subgraph the root graph runs (the loop
  with a model, the pasted-code review without), `CodingOptions` (`coding_max_iterations`)
  and `GenerateRequest`, the structured request (`agent_input`; requests.py).
- `CodingState` (state.py), `CODING_SYSTEM` (prompts.py), `render_result` (render.py);
  tools.py: the loop's tools, the coding operations fed from the state.
The engine (`CodingToolkit`: sandbox, limits, metrics) and the operations live in
`tools.coding`; the app's coding component opens the toolkit, and the agent finds it with
`engine(CodingToolkit)` when a turn runs.
"""

from agents.coding.pasted import PastedReview, review_pasted
from agents.coding.react import build_coding_agent, build_coding_graph, recursion_limit_for
from agents.coding.render import render_result
from agents.coding.requests import CodingOptions, GenerateRequest
from agents.coding.run import coding_input, run_coding
from agents.coding.spec import coding_agent
from agents.coding.state import CodingState

__all__ = [
    "CodingOptions",
    "CodingState",
    "GenerateRequest",
    "PastedReview",
    "build_coding_agent",
    "build_coding_graph",
    "coding_agent",
    "coding_input",
    "recursion_limit_for",
    "render_result",
    "review_pasted",
    "run_coding",
]
