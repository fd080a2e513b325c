"""Pass-through multilang bolt for bench/multilang_bench.cc: re-emits each
input's values anchored to it and acks it, on the Storm-like adapter
(examples/legacy/multilang/storm.py). Each emit blocks until its task ids
arrive, as with Storm's storm.py; `--no-task-ids` emits with
need_task_ids=False instead (no reply awaited)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "examples", "legacy", "multilang"))
import storm  # noqa: E402

NEED_TASK_IDS = "--no-task-ids" not in sys.argv[1:]


class PassThroughBolt(storm.BasicBolt):
    def process(self, tup):
        storm.emit(tup.values, need_task_ids=NEED_TASK_IDS)


if __name__ == "__main__":
    PassThroughBolt().run()
