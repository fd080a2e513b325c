#!/usr/bin/env python3
"""Writes the seed inputs of tests/fuzz/corpus/<target>/ (seed-* files).

Small valid inputs of each format plus hostile ones (deep nesting, huge
numbers, invalid UTF-8, truncations). Inputs that once crashed a target are
kept as crash-* files next to them and are never rewritten here.
Run from anywhere: python3 tests/fuzz/seed_corpus.py
"""
import os
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def write(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


# --- YAML: Flux files and configuration -------------------------------------

FLUX = """name: words
config:
  topology.workers: 2
  topology.max.spout.pending: 100
components:
  - id: fields
    className: org.apache.storm.tuple.Fields
    constructorArgs:
      - ["word"]
spouts:
  - id: sentences
    className: org.apache.storm.testing.TestWordSpout
    parallelism: 2
bolts:
  - id: split
    className: org.apache.storm.flux.wrappers.bolts.FluxShellBolt
    constructorArgs:
      - ["python3", "split.py"]
      - ["word"]
    parallelism: 2
  - id: count
    className: org.apache.storm.testing.TestWordCounter
    parallelism: 1
    numTasks: 2
streams:
  - from: sentences
    to: split
    grouping: {type: SHUFFLE}
  - from: split
    to: count
    grouping:
      type: FIELDS
      args: ["word"]
"""
write("flux_loader", "words.yaml", FLUX)
# Classes of the target's registry (tests/unit/core/test_components.h): validates and lays out.
VALID = """name: valid
config:
  topology.workers: 2
  topology.acker.executors: 2
spouts:
  - id: words
    className: test.WordSpout
    parallelism: 2
bolts:
  - id: split
    className: test.SplitBolt
    parallelism: 3
    numTasks: 6
  - id: count
    className: test.CountBolt
    parallelism: 2
streams:
  - from: words
    to: split
    grouping: {type: SHUFFLE}
  - from: split
    to: count
    grouping: {type: FIELDS, args: [word]}
"""
write("flux_loader", "valid.yaml", VALID)
write("flux_loader", "valid-huge-tasks.yaml", VALID.replace("numTasks: 6", "numTasks: 884750583"))
write("flux_loader", "valid-huge-ackers.yaml", VALID.replace("topology.acker.executors: 2",
                                                             "topology.acker.executors: 2000000000"))
write("flux_loader", "filters.yaml", FLUX.replace("name: words", "name: ${ENV-TOPIC}")
      .replace("parallelism: 2", "parallelism: ${ENV-N}", 1))
write("flux_loader", "includes.yaml", "includes:\n  - resource: false\n    file: other.yaml\n"
      "    override: true\n" + FLUX)
write("flux_loader", "custom-grouping.yaml", FLUX.replace(
    "grouping: {type: SHUFFLE}",
    "grouping:\n      type: CUSTOM\n      customClass:\n        className: "
    "org.apache.storm.grouping.PartialKeyGrouping\n        constructorArgs: [{ref: fields}]"))
# nimbus_flux_includes: the first line is also tried as an include's path
# (relative ones would resolve among the planted files: secret.yaml, shadow).
for name, first in [("relative", "secret.yaml"), ("shadow", "shadow"), ("absolute", "/etc/shadow"),
                    ("traversal", "../../../../etc/passwd"), ("missing", "no-such-file.yaml"),
                    ("proc", "/proc/self/environ")]:
    write("nimbus_flux_includes", name + ".yaml", first + "\n" + FLUX)
write("nimbus_flux_includes", "includes.yaml",
      "includes:\n  - file: secret.yaml\n  - resource: true\n    file: shadow\n"
      "  - file: /etc/passwd\n    override: true\n" + FLUX)
write("nimbus_flux_includes", "bad-include.yaml",
      "includes:\n  - {file: [a, b]}\n  - secret.yaml\n  - {resource: maybe, file: x}\n" + FLUX)
write("flux_loader", "properties.txt", "a=1\nb: two\nc three \\\n  continued\n# comment\n! too\n")
write("flux_loader", "huge-parallelism.yaml", FLUX.replace("parallelism: 1\n",
                                                            "parallelism: 1000000000\n"))
write("flux_loader", "huge-numbers.yaml", FLUX.replace("parallelism: 1\n",
                                                        "parallelism: 99999999999999999999999\n")
      .replace("numTasks: 2", "numTasks: -9223372036854775809"))
write("flux_loader", "deep-nesting.yaml", "name: deep\nconfig:\n  x: " + "[" * 3000 + "]" * 3000 + "\n")
write("flux_loader", "deep-maps.yaml", "name: deep\nconfig:\n  x: " + "{a: " * 3000 + "1" + "}" * 3000 + "\n")
write("flux_loader", "invalid-utf8.yaml", FLUX.encode().replace(b"name: words", b"name: w\xff\xfe\xc3("))
write("flux_loader", "unclosed-quote.yaml", FLUX.replace("name: words", "name: \"words"))
write("flux_loader", "duplicate-keys.yaml", FLUX.replace("name: words", "name: words\nname: again"))
write("flux_loader", "aliases.yaml", "name: a\nconfig:\n  a: &a [x, x, x, x]\n  b: &b [*a, *a, *a, *a]\n"
      "  c: &c [*b, *b, *b, *b]\n  d: [*c, *c, *c, *c]\n" + FLUX[FLUX.index("spouts:"):])
write("flux_loader", "utf16.yaml", FLUX.encode("utf-16"))

CONFIG = """storm.zookeeper.servers:
  - "127.0.0.1"
storm.zookeeper.port: 2181
storm.zookeeper.root: /tempest
nimbus.seeds: ["127.0.0.1"]
ui.port: 8080
topology.workers: 4
topology.message.timeout.secs: 30
topology.acker.executors: null
tempest.transport.max.frame.bytes: 67108864
"""
write("config_loader", "tempest.yaml", CONFIG)
write("config_loader", "override", "topology.workers=4")
write("config_loader", "override-list", "storm.zookeeper.servers=[\"a\", \"b\"]")
write("config_loader", "wrong-types.yaml", "ui.port: abc\ntopology.workers: 2.5\n"
      "storm.zookeeper.session.timeout: -1\ntopology.debug: maybe\n")
write("config_loader", "huge-numbers.yaml", "topology.workers: 4294967297\nui.port: 2147483648\n"
      "topology.message.timeout.secs: 1e400\nx: -99999999999999999999999\n")
write("config_loader", "deep-nesting.yaml", "x: " + "[" * 3000 + "]" * 3000 + "\n")
write("config_loader", "deep-override", "x=" + "{a: " * 3000 + "1" + "}" * 3000)
write("config_loader", "invalid-utf8.yaml", b"topology.name: \xc0\xaf\xff\nui.port: 8080\n")
write("config_loader", "not-a-map.yaml", "- just\n- a list\n")
write("config_loader", "duplicate-keys.yaml", "ui.port: 1\nui.port: 2\n")
write("config_loader", "tabs-and-quotes.yaml", "a:\t'unclosed\nb: \"x\n")

# --- JSON: multilang messages and storm-kafka offsets -----------------------

write("multilang_json", "emit.json",
      '{"command":"emit","anchors":["1","2"],"stream":"default","tuple":["word",3]}')
write("multilang_json", "emit-direct.json",
      '{"command":"emit","stream":"direct","task":2,"tuple":[{"k":[1,2.5,null,true]}],'
      '"need_task_ids":false}')
write("multilang_json", "spout-emit.json",
      '{"command":"emit","id":"42","tuple":["a",{"b":"c"}]}')
write("multilang_json", "ack.json", '{"command":"ack","id":"18446744073709551615"}')
write("multilang_json", "log.json", '{"command":"log","msg":"hello \\u00e9","level":2}')
write("multilang_json", "task-ids.json", "[1,2,3]")
write("multilang_json", "deep-array.json", "[" * 2000 + "]" * 2000)
write("multilang_json", "deep-emit.json",
      '{"command":"emit","tuple":[' + '{"a":' * 5000 + '1' + '}' * 5000 + ',1]}')
write("multilang_json", "huge-numbers.json",
      '{"command":"emit","id":-1,"task":4294967298,"tuple":[1e400,-1e400,'
      '123456789012345678901234567890,-9223372036854775809]}')
write("multilang_json", "invalid-utf8.json", b'{"command":"emit","tuple":["\xff\xfe\xc3(",1]}')
write("multilang_json", "escapes.json", '{"command":"emit","tuple":["\\ud800\\u0000\\"\\\\",1]}')

OFFSET = ('{"topology":{"id":"f1b6c1b4-0a2f-4b55-a1f8-2b1e6d3c9a10","name":"words"},'
          '"offset":1234,"partition":3,"broker":{"host":"127.0.0.1","port":9092},"topic":"events"}')
write("storm_kafka_offset", "storm-0.9.json", OFFSET)
write("storm_kafka_offset", "minimal.json", '{"topology":{"id":"t"},"offset":0}')
write("storm_kafka_offset", "huge-offset.json", OFFSET.replace("1234", "9223372036854775807"))
write("storm_kafka_offset", "too-huge-offset.json", OFFSET.replace("1234", "18446744073709551616"))
write("storm_kafka_offset", "negative-offset.json", OFFSET.replace("1234", "-1"))
write("storm_kafka_offset", "float-offset.json", OFFSET.replace("1234", "1.5e3"))
write("storm_kafka_offset", "huge-partition.json", OFFSET.replace('"partition":3', '"partition":4294967297'))
write("storm_kafka_offset", "wrong-types.json", '{"topology":{"id":7},"offset":"12","broker":[]}')
write("storm_kafka_offset", "deep-nesting.json", '{"topology":' + "[" * 50000 + "]" * 50000 + "}")
write("storm_kafka_offset", "invalid-utf8.json", OFFSET.encode().replace(b"words", b"\xff\xfe"))
write("storm_kafka_offset", "truncated.json", OFFSET[:40])

# --- Transport frames and envelopes ------------------------------------------


def frame(messages, flags=0, magic=0x46504D54, version=1, count=None, length=None):
    payload = b"".join(struct.pack("<iI", task, len(b)) + b for task, b in messages)
    header = struct.pack("<IBBHII", magic, version, flags, 0,
                         len(payload) if length is None else length,
                         len(messages) if count is None else count)
    return header + b"\0" * 32 + payload


write("frame_codec", "one-message", frame([(3, b"hello")]))
write("frame_codec", "two-frames", frame([(1, b"a"), (2, b"")]) + frame([(7, b"xyz" * 10)]))
write("frame_codec", "hello", frame([], flags=2)[:48 - 32] + b"\0" * 32 + b"n" * 32)
write("frame_codec", "bad-magic", frame([(1, b"x")], magic=0x12345678))
write("frame_codec", "bad-version", frame([(1, b"x")], version=9))
write("frame_codec", "mac-flag", frame([(1, b"x")], flags=1))
write("frame_codec", "huge-length", frame([(1, b"x")], length=0xFFFFFFFF))
write("frame_codec", "huge-count", frame([(1, b"x")], count=0xFFFFFFFF))
write("frame_codec", "inner-length-overflow",
      frame([(1, b"x")])[:48] + struct.pack("<iI", 1, 0xFFFFFFF0) + b"x")
write("frame_codec", "truncated", frame([(3, b"hello")])[:30])


def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def zigzag(n):
    return (n << 1) ^ (n >> 63)


def s(text):
    return varint(len(text)) + text


# Tasks of the target's topology: acker 1? The first byte picks the task; try several.
tuple_body = (b"\x00" + varint(2) + varint(1) + varint(1) + struct.pack("<QQ", 7, 9) + varint(1)
              + b"\x05" + s(b"v"))
for task in range(4):
    write("envelope_codec", "tuple-task%d" % task, bytes([task + 1]) + tuple_body)
values3 = (b"\x03" + varint(zigzag(-5)) + b"\x04" + struct.pack("<d", 2.5)
           + b"\x08" + varint(2) + s(b"k") + b"\x07" + varint(2) + b"\x00\x02" + s(b"m") + b"\x06" + s(b"\xff\x00"))
write("envelope_codec", "tuple-three-values", b"\x03" + b"\x00" + varint(2) + varint(0) + varint(0)
      + varint(3) + values3)
write("envelope_codec", "ack", b"\x01" + b"\x01" + struct.pack("<QQ", 1, 2) + varint(2))
write("envelope_codec", "spout-ack", b"\x02" + b"\x05" + struct.pack("<QQ", 1, 0) + varint(2))
write("envelope_codec", "deep-list", b"\x02" + b"\x00" + varint(2) + varint(1) + varint(0) + varint(1)
      + (b"\x07" + varint(1)) * 2000 + b"\x00")
write("envelope_codec", "huge-count", b"\x02" + b"\x00" + varint(2) + varint(1) + varint(2 ** 62)
      + varint(1))
write("envelope_codec", "huge-string", b"\x02" + b"\x00" + varint(2) + varint(1) + varint(0) + varint(1)
      + b"\x05" + varint(2 ** 63))
write("envelope_codec", "overlong-varint", b"\x02" + b"\x00" + b"\xff" * 20)

# --- HTTP ---------------------------------------------------------------------

write("http_router", "summary", "GET /api/v1/topology/summary")
write("http_router", "kill-wait", "POST /api/v1/topology/words-1-17/kill/30?x=1&wait=%32")
write("http_router", "component", "GET /api/v1/topology/a%2Fb/component/c%00d?wait=a+b")
write("http_router", "method", "DELETE /api/v1/topology/x")
write("http_router", "traversal", "GET /../../etc/passwd/%2e%2e/%ff/")
write("http_router", "bad-escape", "GET /api/v1/topology/%zz/kill/%")
write("http_router", "many-slashes", "GET " + "/" * 3000 + "api")

GET = "GET /api/v1/topology/summary HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
write("http_request", "get", GET)
write("http_request", "keep-alive-two", GET + "POST /api/v1/topology/t-1/kill/5 HTTP/1.1\r\n"
      "Host: x\r\nContent-Length: 2\r\n\r\n{}")
write("http_request", "chunked", "POST /api/v1/topology HTTP/1.1\r\nHost: x\r\n"
      "Transfer-Encoding: chunked\r\n\r\n4\r\n{\"a\"\r\n3\r\n:1}\r\n0\r\nX-Trailer: t\r\n\r\n")
write("http_request", "static", "GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n")
write("http_request", "traversal", "GET /..%2fsecret.txt HTTP/1.1\r\nHost: x\r\n\r\n")
write("http_request", "traversal-dots", "GET /%2e%2e/secret.txt HTTP/1.1\r\nHost: x\r\n\r\n")
write("http_request", "huge-content-length", "POST /api/v1/topology HTTP/1.1\r\nHost: x\r\n"
      "Content-Length: 99999999999999999999\r\n\r\n{}")
write("http_request", "huge-chunk", "POST /api/v1/topology HTTP/1.1\r\nHost: x\r\n"
      "Transfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFF\r\nx\r\n")
write("http_request", "long-header", "GET / HTTP/1.1\r\nHost: x\r\nX-Long: " + "a" * 9000 + "\r\n\r\n")
write("http_request", "invalid-utf8", b"GET /api/v1/topology/\xff\xfe HTTP/1.1\r\nHost: \xc0\r\n\r\n")
write("http_request", "bad-method", "G\x00T / HTTP/1.1\r\n\r\n")
write("http_request", "http10", "GET /api/v1/cluster/summary HTTP/1.0\r\n\r\n")
write("http_request", "wrong-method", "PUT /api/v1/topology/x/kill HTTP/1.1\r\nHost: x\r\n\r\n")

# --- Protobuf payloads (first byte: 0 StormBase, 1 resources, 2 heartbeat, 3 worker.json)


def field(num, wire, payload):
    return varint(num << 3 | wire) + payload


def pstr(num, data):
    if isinstance(data, str):
        data = data.encode()
    return field(num, 2, s(data))


def pint(num, n):
    return field(num, 0, varint(n & 0xFFFFFFFFFFFFFFFF))


base = (pstr(1, "words") + pint(3, 2) + pstr(12, FLUX) + pstr(13, "words.yaml")
        + pstr(14, pstr(1, "topology.workers") + pstr(2, "3"))
        + pstr(17, pstr(1, "count") + pint(2, 2)))
write("proto_readers", "storm-base", b"\x00" + base)
write("proto_readers", "storm-base-bad-override", b"\x00" + base
      + pstr(14, pstr(1, "x") + pstr(2, "{" * 3000)) + pstr(17, pstr(1, "nope") + pint(2, -1)))
write("proto_readers", "storm-base-huge-executors", b"\x00" + base
      + pstr(17, pstr(1, "split") + pint(2, 2 ** 31 - 1)))
write("proto_readers", "resources", b"\x01" + pstr(1, pstr(1, "split.py") + pstr(2, "print(1)")
                                                   + pint(3, 1)) + pstr(1, pstr(1, "data/words.txt")))
write("proto_readers", "resources-traversal", b"\x01" + pstr(1, pstr(1, "../../etc/x"))
      + pstr(1, pstr(1, "/abs")) + pstr(1, pstr(1, "a//b")) + pstr(1, pstr(1, "a/\x00b")))
write("proto_readers", "heartbeat", b"\x02" + pstr(1, "words-1-1700000000") + pstr(2, "sup")
      + pint(3, 6700) + pint(4, 1700000000) + pint(6, 42))
write("proto_readers", "heartbeat-negative", b"\x02" + pstr(1, "t") + pint(3, -1) + pint(4, -5))
write("proto_readers", "worker-json", b"\x03" + b'{"pid":42,"topologyId":"words-1","port":6700,'
      b'"supervisorId":"sup","launchedAtSecs":1700000000}')
write("proto_readers", "worker-json-huge", b"\x03" + b'{"pid":99999999999999999999,"topologyId":"t",'
      b'"port":4294967297,"launchedAtSecs":1e400}')
write("proto_readers", "truncated", b"\x00" + base[:25])
write("proto_readers", "invalid-utf8", b"\x00" + pstr(1, b"\xff\xfe") + pstr(12, b"name: \xc3("))
