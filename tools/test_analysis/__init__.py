"""The test-smell engine: parsing, the rule engine, LLM batch review helpers, synthesis and
enhancement of findings. Pure, synchronous Python (no LangGraph, no FastAPI): the
test-analysis agent's nodes, the analysis REST endpoints and the benches call it.

    parsing.py     parse_file: cached AST + discovered tests (cache.py: the parse cache)
    rules/         check_file: every smell of SMELLS.md in one walk; noqa and ignore lists
    gcpause.py     the cyclic GC paused while a file is parsed and checked (cold speed)
    catalogue.py   the smells: ids, names, severities; templates.py their fix templates
    schemas.py     pydantic models: AnalysisConfig, Finding, Issue, AnalysisResult, ...
    batches.py     tests grouped into LLM review batches; validation of the model's answer
    synthesis.py   merge rule and LLM findings, dedupe, prioritise, summarize
    enhance.py     fix suggestions and examples for findings
    validation.py  input checks: paths, sizes, encodings (AnalysisInputError -> 4xx)
    pipeline.py    analyze_files: the whole rules-only pipeline in one call
    filework.py    parse-once, single-flight parsing shared by concurrent stages
    report.py      the chat summary of a result

Profiles (``AnalysisConfig.profile``): ``"default"`` reports what a maintainer would act on
(rules/*.py document per smell what it leaves out; sensitive-equality, obscure-setup,
test-maverick and lack-of-cohesion are off unless ``enable`` names them); ``"strict"``
reports every smell of SMELLS.md by its literal definition. Both give fixes as valid code in
the test's own style (rules/fixes.py).

Suppression: ``# noqa: <smell-id>[, ...]`` on a finding's line suppresses those smells there;
a bare ``# noqa`` suppresses every smell on its line (``honor_bare_noqa=False`` disables
that); test- and class-level smells take the comment on the ``def``/``class`` line. The
config's ``ignore`` list switches smells off for the whole request. See ``rules/noqa.py``.

Dedupe and confidence: see ``synthesis.py`` (same file/line/smell is one finding; rule and
LLM agreeing combine by noisy-OR).
"""
