"""The agent contract: what every agent package implements and what the graph spine gives it.

Agents sit below the graph spine (imports go app -> graph -> agents -> tools), so the contract
the spine composes agents by lives here, at the bottom of the agents layer, where every agent
may import it and no agent imports another:

    spec.py      AgentSpec: name, description, routing keywords/examples, the subgraph factory,
                 the nodes whose model tokens are the answer, the per-run options model
    state.py     the keys an agent reads (AgentInput) and writes (AgentOutput) in the root
                 state, AgentAnswer, RouteDecision and their reducers
    context.py   RunContext (LangGraph's context_schema: services + per-run options),
                 AgentServices (chat models, embeddings, shared engines), AgentOptions
    quality.py   gated(): the quality gate every stage runs through, and its metrics
    messages.py  helpers over the conversation (the latest user text)
"""
