"""Pass-through multilang bolt for bench/multilang_bench.cc: re-emits each
input's values anchored to it and acks it."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "examples", "legacy", "multilang"))
import storm  # noqa: E402


class PassThroughBolt(storm.BasicBolt):
    def process(self, tup):
        storm.emit(tup.values, need_task_ids=False)


if __name__ == "__main__":
    PassThroughBolt().run()
