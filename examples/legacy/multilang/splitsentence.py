"""A multilang split bolt: one ["word"] tuple per whitespace-separated word,
anchored to the sentence, which is acked afterwards (Storm's example)."""

import storm


class SplitSentenceBolt(storm.BasicBolt):
    def process(self, tup):
        for word in str(tup.values[0]).split():
            storm.emit([word], need_task_ids=False)


if __name__ == "__main__":
    SplitSentenceBolt().run()
