"""Background runs: any agent's input run on a thread by a worker, from a Redis Streams queue.

    store.py     RunStore: the run record and its state machine, the queue, the cancel flag,
                 the run's stored input, its event stream, the per-thread run indexes
    worker.py    RunWorker: the consumer in every API process (claim, heartbeat, take-over of
                 runs left by a dead process, resume from the last checkpoint)
    spec.py      RunSpec: how a run is run (input or command, fork, stream modes, durability)
    events.py    what a run's event stream carries (compact events, or the Agent Server's modes)
    threads.py   serial runs on a thread: their order, the thread's lock, how they end
    views.py     a run as the Agent Server API shows it (statuses pending ... interrupted)
    webhooks.py  a run's outcome POSTed to its webhook (checked against SSRF)

A run is a turn of the one graph on a thread (``ChatInput`` plus options), so the worker knows
nothing of any agent; an agent reports progress through LangGraph's stream writer (``custom``
events) and the run's stream carries it to any API process.
"""
