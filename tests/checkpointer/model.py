"""The reference model of the stateful test: `InMemorySaver` plus the operations it lacks
(copy_thread, delete_for_runs, prune), written plainly from their documented semantics."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver


class ModelSaver(InMemorySaver):
    """InMemorySaver with copy_thread (merge), delete_for_runs and prune (both strategies)."""

    def _metadata(self, thread_id: str, ns: str, checkpoint_id: str) -> dict[str, Any]:
        return self.serde.loads_typed(self.storage[thread_id][ns][checkpoint_id][1])

    def _drop(self, thread_id: str, ns: str, checkpoint_id: str) -> None:
        del self.storage[thread_id][ns][checkpoint_id]
        if not self.storage[thread_id][ns]:
            del self.storage[thread_id][ns]
        self.writes.pop((thread_id, ns, checkpoint_id), None)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        for ns, checkpoints in list(self.storage.get(source_thread_id, {}).items()):
            self.storage[target_thread_id][ns].update(checkpoints)
        for (tid, ns, cid), writes in list(self.writes.items()):
            if tid == source_thread_id:
                self.writes[(target_thread_id, ns, cid)].update(writes)
        for (tid, ns, channel, version), blob in list(self.blobs.items()):
            if tid == source_thread_id:
                self.blobs[(target_thread_id, ns, channel, version)] = blob

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        runs = {str(r) for r in run_ids}
        for tid, namespaces in list(self.storage.items()):
            for ns, checkpoints in list(namespaces.items()):
                for cid in list(checkpoints):
                    if str(self._metadata(tid, ns, cid).get("run_id")) in runs:
                        self._drop(tid, ns, cid)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        for tid in thread_ids:
            if strategy == "delete":
                self.delete_thread(tid)
                continue
            namespaces = self.storage.get(tid, {})
            latest = {ns: max(cps) for ns, cps in namespaces.items() if cps}
            roots = set(namespaces.get("", {}))
            calls = {
                ns
                for ns, cid in latest.items()
                if ":" in ns
                and (root := self._metadata(tid, ns, cid).get("parents", {}).get("")) in roots
                and root != latest.get("")
            }
            for ns in list(namespaces):
                for cid in list(namespaces[ns]):
                    if ns in calls or cid != latest[ns]:
                        self._drop(tid, ns, cid)
                    else:
                        checkpoint, metadata, _parent = namespaces[ns][cid]
                        namespaces[ns][cid] = (checkpoint, metadata, None)
            for key in [k for k in self.writes if k[0] == tid and k[1] in calls]:
                del self.writes[key]
