"""A split bolt on the Storm-like adapter (examples/legacy/multilang/storm.py):
every emit is anchored to the input and blocks until its task ids arrive;
tuples and heartbeats that arrive meanwhile are queued. For the restart tests.

Usage: storm_like_bolt.py MODE N
  die       every incarnation exits (status 5) after its N-th input
  hang      the first incarnation stops reading and answering after N inputs
  garbage   every incarnation writes a message that is not JSON on its N-th input
The handshake context goes to context.json, each incarnation's pid is
appended to pids.txt (both in the working directory).
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "..", "examples", "legacy", "multilang"))
import storm  # noqa: E402

MODE = sys.argv[1]
N = int(sys.argv[2])
HUNG_MARKER = "hung-once"


class StormLikeBolt(storm.BasicBolt):
    def initialize(self, conf, context):
        self.seen = 0
        with open("context.json", "w") as f:
            json.dump(context, f)
        with open("pids.txt", "a") as f:
            f.write("%d\n" % os.getpid())

    def process(self, tup):
        self.seen += 1
        if self.seen == N:
            if MODE == "garbage":
                storm._flush()
                os.write(storm._out_fd, b"{this is not json\nend\n")
            elif MODE == "hang" and not os.path.exists(HUNG_MARKER):
                open(HUNG_MARKER, "w").close()
                storm._flush()
                while True:
                    time.sleep(1)
        for word in str(tup.values[0]).split():
            task_ids = storm.emit([word])
            if not isinstance(task_ids, list) or len(task_ids) != 1:
                storm.report_error("expected one target task, got %r" % (task_ids,))

    def run(self):
        # BasicBolt acks after process(); the death comes after that ack is out.
        if MODE != "die":
            return super().run()
        original_ack = storm.ack

        def ack_then_maybe_die(tup):
            original_ack(tup)
            if self.seen >= N:
                storm._flush()
                os._exit(5)
        storm.ack = ack_then_maybe_die
        return super().run()


if __name__ == "__main__":
    StormLikeBolt().run()
