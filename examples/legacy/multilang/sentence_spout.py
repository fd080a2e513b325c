"""A reliable multilang spout: emits ["sentence"] tuples with ids and replays
a sentence when its tuple fails.

Usage: sentence_spout.py [COUNT]   COUNT sentences in all (default: endless).
"""

import collections
import sys
import time

import storm

SENTENCES = [
    "the cow jumped over the moon",
    "an apple a day keeps the doctor away",
    "four score and seven years ago",
    "snow white and the seven dwarfs",
    "i am at two with nature",
]


class SentenceSpout(storm.Spout):
    def initialize(self, conf, context):
        self.limit = int(sys.argv[1]) if len(sys.argv) > 1 else -1
        self.next_id = 0
        self.pending = {}
        self.replay = collections.deque()

    def next_tuple(self):
        if self.replay:
            msg_id = self.replay.popleft()
        elif self.limit < 0 or self.next_id < self.limit:
            msg_id = self.next_id
            self.next_id += 1
            self.pending[msg_id] = SENTENCES[msg_id % len(SENTENCES)]
        else:
            time.sleep(0.001)  # all emitted: do not spin
            return
        storm.emit([self.pending[msg_id]], id=msg_id, need_task_ids=False)

    def ack(self, id):
        self.pending.pop(id, None)

    def fail(self, id):
        if id in self.pending:
            self.replay.append(id)


if __name__ == "__main__":
    SentenceSpout().run()
