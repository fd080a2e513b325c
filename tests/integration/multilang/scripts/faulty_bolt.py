"""A split bolt that misbehaves once, for ShellBolt's failure tests.

Usage: faulty_bolt.py MODE AFTER
After AFTER tuples, the first incarnation (no marker file in the working
directory yet) does MODE:
  kill      nothing itself: it only records its pid; the test SIGKILLs it
  malformed writes a message that is not JSON
  binary    writes binary junk followed by "end"
  huge      writes one line of 20 MiB without a newline
  hang      stops reading and answering (heartbeats included)
  nonsense  writes protocol nonsense that must be survived without a
            restart, then carries on
Every incarnation appends its pid to pids.txt.
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "..", "examples", "legacy", "multilang"))
import storm  # noqa: E402

MODE = sys.argv[1]
AFTER = int(sys.argv[2])
MARKER = "faulted-" + MODE


def raw(data):
    storm._flush()
    view = memoryview(data)
    while view:
        view = view[os.write(storm._out_fd, view):]


def misbehave():
    open(MARKER, "w").close()
    if MODE == "malformed":
        raw(b'{"command": "ack", "id": \nthis is not json\nend\n')
    elif MODE == "binary":
        raw(bytes(range(256)) * 4 + b"\nend\n")
    elif MODE == "huge":
        raw(b"x" * (20 << 20))
    elif MODE == "hang":
        storm._flush()
        while True:
            time.sleep(1)
    elif MODE == "nonsense":
        storm.send_message({"command": "dance"})
        storm.send_message({"command": "ack", "id": "123456789"})
        storm.send_message({"command": "fail", "id": [1, 2]})
        storm.send_message({"command": "emit", "tuple": "not a list"})
        storm.send_message({"command": "emit", "tuple": [1, 2, 3]})
        storm.send_message({"command": "emit", "stream": 7, "tuple": ["x"]})
        storm.send_message({"command": "emit", "stream": "nowhere", "tuple": ["x"]})
        storm.send_message({"command": "emit", "tuple": ["x"], "anchors": ["999999", None]})
        storm.send_message({"command": "emit", "tuple": ["x"], "task": "seven"})
        storm.send_message({"command": "log", "msg": {"nested": True}, "level": "loud"})
        storm.send_message({"command": "error", "msg": 42})
        storm.send_message({"command": "metrics", "name": "m", "params": None})


class FaultyBolt(storm.BasicBolt):
    def initialize(self, conf, context):
        self.seen = 0
        with open("pids.txt", "a") as f:
            f.write("%d\n" % os.getpid())

    def process(self, tup):
        self.seen += 1
        if self.seen == AFTER and not os.path.exists(MARKER) and MODE != "kill":
            misbehave()
        for word in str(tup.values[0]).split():
            storm.emit([word], need_task_ids=False)


if __name__ == "__main__":
    FaultyBolt().run()
