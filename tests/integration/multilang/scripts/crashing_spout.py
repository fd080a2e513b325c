"""A spout whose first incarnation dies (os._exit) after AFTER emits, or,
with MODE "malformed", writes a message that is not JSON instead.

Usage: crashing_spout.py MODE AFTER      MODE: exit | malformed
Every incarnation appends its pid to pids.txt in the working directory.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "..", "examples", "legacy", "multilang"))
import storm  # noqa: E402

MODE = sys.argv[1]
AFTER = int(sys.argv[2])
MARKER = "spout-faulted-" + MODE


class CrashingSpout(storm.Spout):
    def initialize(self, conf, context):
        self.next_id = 0
        with open("pids.txt", "a") as f:
            f.write("%d\n" % os.getpid())

    def next_tuple(self):
        if self.next_id == AFTER and not os.path.exists(MARKER):
            open(MARKER, "w").close()
            if MODE == "exit":
                storm._flush()
                os._exit(3)
            storm._flush()
            os.write(storm._out_fd, b"{not json\nend\n")
        storm.emit(["sentence %d" % self.next_id], id=self.next_id, need_task_ids=False)
        self.next_id += 1


if __name__ == "__main__":
    CrashingSpout().run()
