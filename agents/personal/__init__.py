"""The personal agents (task, food, event): one package, three specs from one builder.

spec.py      task_agent(), food_agent(), event_agent() (their cards) and the helpers that
             build or run one agent (tests, bench)
turn.py      personal_spec(): the agent in the root graph (one `personal_turn` node),
             handoffs between the three through the spine's bounded path
kit.py       the agent's own subgraph: a ReAct agent with a chat model, the interpreter
             calling the same tools without one
tools.py     the personal operations bound as tools (one wrapper), remember, transfer
context.py   the turn's runtime context, the handoff decision, the agent's state
prompts.py   the three system prompts
interpret/   the model-free stand-in: a request becomes calls to the agent's tools
"""
