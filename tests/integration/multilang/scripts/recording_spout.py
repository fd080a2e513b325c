"""A reliable spout on the Storm-like adapter (examples/legacy/multilang/storm.py)
that records every command it receives, for the ShellSpout deactivate test.

Usage: recording_spout.py COUNT
Emits "sentence <i>" with message id i for i < COUNT; each emit blocks until
its task ids arrive (commands arriving meanwhile are queued, as Storm's
adapters do). Appends one line per command to commands.txt: "activate",
"deactivate", "emit <id>" (before the emit), "ack <id>", "fail <id>" (flushed
at once).
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "..", "examples", "legacy", "multilang"))
import storm  # noqa: E402

COUNT = int(sys.argv[1])


class RecordingSpout(storm.Spout):
    def initialize(self, conf, context):
        self.next_id = 0
        self.log = open("commands.txt", "a", buffering=1)

    def record(self, line):
        self.log.write(line + "\n")
        self.log.flush()

    def activate(self):
        self.record("activate")

    def deactivate(self):
        self.record("deactivate")

    def ack(self, id):
        self.record("ack %s" % id)

    def fail(self, id):
        self.record("fail %s" % id)

    def next_tuple(self):
        if self.next_id >= COUNT:
            return
        self.record("emit %d" % self.next_id)
        task_ids = storm.emit(["sentence %d" % self.next_id], id=self.next_id)
        if not isinstance(task_ids, list):
            storm.report_error("expected task ids, got %r" % (task_ids,))
        self.next_id += 1


if __name__ == "__main__":
    RecordingSpout().run()
