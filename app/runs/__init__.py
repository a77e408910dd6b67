"""Background runs: any agent's input run on a thread by a worker, from a Redis Streams queue.

    store.py     RunStore: the run record and its state machine, the queue, the cancel flag,
                 the run's stored input, its event stream, the per-thread run indexes
    worker.py    RunWorker: the consumer in every API process (claim, heartbeat, take-over of
                 runs left by a dead process, resume from the last checkpoint)
    spec.py      RunSpec: how a run is run (input or command, fork, stream modes, durability)
    executor.py  the one executor of every graph run (chat turns and the synchronous endpoints
                 too): events to a sink, cancellation, the deadline, failures
    events.py    the one event mapper: LangGraph's chunks to each wire's events (/chat/stream,
                 a turn run's compact events, the Agent Server's modes)
    threads.py   serial runs on a thread: their order, the thread's lock, how they end
    views.py     a run as the Agent Server API shows it (statuses pending ... interrupted)
    webhooks.py  a run's outcome POSTed to its webhook (checked against SSRF)

A run is a turn of the one graph on a thread (``ChatInput`` plus options), so the worker knows
nothing of any agent; an agent reports progress through LangGraph's stream writer (the app's
``progress`` event, ``custom`` on the Agent Server's wire) and the run's stream carries it to
any API process.
"""
