"""The test-analysis agent: a parallel fan-out over test files with synthesis, enhancement and a
quality gate. The analysis itself (parsing, rules, synthesis) is the engine in
``tools.test_analysis``; this package holds the agent's graph:

    spec.py        registration, the seven stage nodes and their quality gates, the fan-out
    state.py       the agent's working state (plain data) and its reducers
    planning.py    plan_analysis: mode, files, LLM batches, estimates
    stages.py      parse_files, check_rules, synthesize_findings, enhance_findings
    review.py      review_with_llm (one Send task per batch); prompts.py its prompts
    results.py     assure_quality's result schema and checks
    chat_input.py  test code out of a chat message
"""
