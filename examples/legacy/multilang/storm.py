"""Storm multilang protocol for Python components run by Tempest (or Storm).

Compatible with the API of Storm's storm.py: subclass BasicBolt, Bolt or
Spout and call run().  Standard library only.

Protocol: every message is one JSON document followed by a line "end", on
stdin (from the runtime) and stdout (to it).  Output is buffered and written
whenever this process is about to wait for input, so a batch of tuples is
answered with one write.
"""

import collections
import json
import os
import sys
import traceback

_in_fd = sys.stdin.fileno()
_out_fd = sys.stdout.fileno()
# Anything printed by the component must not corrupt the protocol stream.
sys.stdout = sys.stderr

_in_buf = bytearray()
_in_pos = 0
_out_parts = []

_pending_commands = collections.deque()
_pending_task_ids = collections.deque()

MODE = None  # "bolt" or "spout"
ANCHOR_TUPLE = None  # BasicBolt: the tuple being processed


def _flush():
    if not _out_parts:
        return
    data = "".join(_out_parts).encode("utf-8", "surrogateescape")
    _out_parts.clear()
    view = memoryview(data)
    while view:
        written = os.write(_out_fd, view)
        view = view[written:]


def _read_line():
    global _in_buf, _in_pos
    while True:
        nl = _in_buf.find(b"\n", _in_pos)
        if nl >= 0:
            line = _in_buf[_in_pos:nl]
            _in_pos = nl + 1
            return line.decode("utf-8", "replace")
        # About to block: answer everything staged so far first.
        _flush()
        if _in_pos:
            del _in_buf[:_in_pos]
            _in_pos = 0
        chunk = os.read(_in_fd, 1 << 16)
        if not chunk:
            sys.exit(0)  # the runtime went away
        _in_buf += chunk


def read_message():
    lines = []
    while True:
        line = _read_line()
        if line == "end":
            break
        lines.append(line)
    return json.loads("\n".join(lines))


def send_message(message):
    _out_parts.append(json.dumps(message))
    _out_parts.append("\nend\n")


def read_task_ids():
    if _pending_task_ids:
        return _pending_task_ids.popleft()
    message = read_message()
    while not isinstance(message, list):
        _pending_commands.append(message)
        message = read_message()
    return message


def read_command():
    if _pending_commands:
        return _pending_commands.popleft()
    message = read_message()
    while isinstance(message, list):
        _pending_task_ids.append(message)
        message = read_message()
    return message


def sync():
    send_message({"command": "sync"})


def log(msg, level=2):
    send_message({"command": "log", "msg": str(msg), "level": level})


def log_trace(msg):
    log(msg, 0)


def log_debug(msg):
    log(msg, 1)


def log_info(msg):
    log(msg, 2)


def log_warn(msg):
    log(msg, 3)


def log_error(msg):
    log(msg, 4)


def report_error(msg):
    send_message({"command": "error", "msg": str(msg)})


reportError = report_error  # the name Storm's storm.py uses


def metrics(name, params):
    send_message({"command": "metrics", "name": name, "params": params})


def ack(tup):
    send_message({"command": "ack", "id": tup.id})


def fail(tup):
    send_message({"command": "fail", "id": tup.id})


def emit(tup, stream=None, anchors=None, direct_task=None, id=None, need_task_ids=True):
    """Emits `tup` (a list of values).  Returns the target task ids unless
    need_task_ids is False or the emit is direct."""
    if MODE == "bolt":
        return _emit_bolt(tup, stream, anchors, direct_task, need_task_ids)
    return _emit_spout(tup, stream, id, direct_task, need_task_ids)


def _emit_bolt(tup, stream, anchors, direct_task, need_task_ids):
    if anchors is None:
        anchors = [ANCHOR_TUPLE] if ANCHOR_TUPLE is not None else []
    message = {"command": "emit", "tuple": tup,
               "anchors": [a.id if isinstance(a, Tuple) else a for a in anchors]}
    return _send_emit(message, stream, direct_task, need_task_ids)


def _emit_spout(tup, stream, id, direct_task, need_task_ids):
    message = {"command": "emit", "tuple": tup}
    if id is not None:
        message["id"] = id
    return _send_emit(message, stream, direct_task, need_task_ids)


def _send_emit(message, stream, direct_task, need_task_ids):
    if stream is not None:
        message["stream"] = stream
    if direct_task is not None:
        message["task"] = direct_task
        need_task_ids = False
    if not need_task_ids:
        message["need_task_ids"] = False
    send_message(message)
    if need_task_ids:
        return read_task_ids()
    return None


def emit_direct(task, tup, stream=None, anchors=None, id=None):
    emit(tup, stream=stream, anchors=anchors, direct_task=task, id=id)


class Tuple(object):
    __slots__ = ("id", "component", "stream", "task", "values")

    def __init__(self, id, component, stream, task, values):
        self.id = id
        self.component = component
        self.stream = stream
        self.task = task
        self.values = values

    def is_heartbeat(self):
        return self.task == -1 and self.stream == "__heartbeat"

    def is_tick(self):
        return self.stream == "__tick"

    def __repr__(self):
        return "<Tuple %s:%s@%s %r>" % (self.component, self.stream, self.task, self.values)


def _read_tuple(message):
    return Tuple(message.get("id"), message.get("comp"), message.get("stream"),
                 message.get("task"), message.get("tuple"))


def _handshake():
    setup = read_message()
    pid = os.getpid()
    pid_dir = setup.get("pidDir")
    if pid_dir:
        try:
            open(os.path.join(pid_dir, str(pid)), "w").close()
        except OSError:
            pass
    send_message({"pid": pid})
    _flush()
    return setup.get("conf", {}), setup.get("context", {})


class Bolt(object):
    """Acks and anchors are up to process()."""

    def initialize(self, conf, context):
        pass

    def process(self, tup):
        pass

    def run(self):
        global MODE
        MODE = "bolt"
        conf, context = _handshake()
        try:
            self.initialize(conf, context)
            while True:
                tup = _read_tuple(read_command())
                if tup.is_heartbeat():
                    sync()
                else:
                    self.process(tup)
        except Exception:
            report_error(traceback.format_exc())
            _flush()
            raise


class BasicBolt(object):
    """Emits are anchored to the input; the input is acked after process()
    returns, or failed if it raises."""

    def initialize(self, conf, context):
        pass

    def process(self, tup):
        pass

    def run(self):
        global MODE, ANCHOR_TUPLE
        MODE = "bolt"
        conf, context = _handshake()
        try:
            self.initialize(conf, context)
        except Exception:
            report_error(traceback.format_exc())
            _flush()
            raise
        while True:
            tup = _read_tuple(read_command())
            if tup.is_heartbeat():
                sync()
                continue
            ANCHOR_TUPLE = tup
            try:
                self.process(tup)
            except Exception:
                report_error(traceback.format_exc())
                fail(tup)
            else:
                ack(tup)
            finally:
                ANCHOR_TUPLE = None


class Spout(object):
    def initialize(self, conf, context):
        pass

    def activate(self):
        pass

    def deactivate(self):
        pass

    def ack(self, id):
        pass

    def fail(self, id):
        pass

    def next_tuple(self):
        pass

    # Storm's storm.py spelling.
    def nextTuple(self):
        self.next_tuple()

    def run(self):
        global MODE
        MODE = "spout"
        conf, context = _handshake()
        try:
            self.initialize(conf, context)
            while True:
                message = read_command()
                command = message.get("command")
                if command == "next":
                    self.nextTuple()
                elif command == "ack":
                    self.ack(message.get("id"))
                elif command == "fail":
                    self.fail(message.get("id"))
                elif command == "activate":
                    self.activate()
                elif command == "deactivate":
                    self.deactivate()
                sync()
        except Exception:
            report_error(traceback.format_exc())
            _flush()
            raise
