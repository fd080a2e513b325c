#!/usr/bin/python3
"""The adversarial pass: hostile input of every class against a running
`tempest dev` cluster, with the outcome of each.

Classes (and counts): Flux files (58), config files (10), HTTP requests
(100), transport attacks (14), multilang children (19), znode corruptions
(16), Kafka records (14). Every input gets one of these outcomes:

  refused   one clear error (non-zero exit, or HTTP 4xx/5xx, or the
            connection closed) and nothing else happened
  accepted  the input was valid after all and did its job
  contained a misbehaving multilang child: its tuples failed and were
            counted, the run went on and stopped within its bound
  crash     a process died of a signal (a defect)
  hang      no answer within the bound (a defect)

After every input nimbus must answer a healthy request; at the end the
healthy topology that ran throughout must have lost nothing.

Run as a user would: /usr/bin/python3 tests/adversarial/adversarial_pass.py
[--tempest build/release/cli/tempest] [--out DIR]. Needs python3-kazoo and
python3-kafka (Debian). Loopback only; every process it starts is stopped.
Prints a table and writes DIR/adversarial.json.
"""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Pass:
    def __init__(self, tempest, out):
        self.tempest = tempest
        self.out = out
        self.results = {}  # class -> list of (name, outcome, detail)
        self.dev = None
        self.last_done = ""  # the "done: ..." line of the last `tempest local`

    # --- the cluster -------------------------------------------------------
    def start_cluster(self):
        self.dev_out = os.path.join(self.out, "dev.out")
        self.dev = subprocess.Popen(
            [self.tempest, "dev", "--supervisors", "1", "--dir",
             os.path.join(self.out, "cluster"), "-c", "ui.port=0"],
            stdout=open(self.dev_out, "w"), stderr=subprocess.STDOUT,
            start_new_session=True)
        deadline = time.time() + 180
        while time.time() < deadline:
            text = open(self.dev_out).read()
            if "\nready" in text or text.startswith("ready"):
                break
            if self.dev.poll() is not None:
                sys.exit("tempest dev exited:\n" + text)
            time.sleep(0.5)
        else:
            sys.exit("tempest dev not ready in 180 s")
        text = open(self.dev_out).read()
        self.nimbus = re.search(r"^nimbus=(\S+)", text, re.M).group(1)
        self.zk = re.search(r"^zookeeper=(\S+)", text, re.M).group(1)
        self.bootstrap = re.search(r"^bootstrap.servers=(\S+)", text, re.M).group(1)
        # `tempest dev` protects writes with a generated API token.
        self.token_file = re.search(r"^token-file=(.+)$", text, re.M).group(1)
        # The cluster's ZooKeeper identity: these corruptions play an attacker
        # who already holds it (an anonymous client is refused everywhere).
        self.zk_auth_file = re.search(r"^zk-auth-file=(.+)$", text, re.M).group(1)
        with open(self.token_file) as f:
            self.token = f.readline().strip()
        host, port = self.nimbus.rsplit(":", 1)
        self.nimbus_addr = (host, int(port))

    def stop_cluster(self):
        if self.dev and self.dev.poll() is None:
            os.killpg(self.dev.pid, signal.SIGINT)
            try:
                self.dev.wait(90)
            except subprocess.TimeoutExpired:
                os.killpg(self.dev.pid, signal.SIGKILL)

    def cli(self, args, timeout=60, env=None):
        """(exit code or 'hang', stderr's first line); a negative code is a signal."""
        e = dict(os.environ, TEMPEST_NIMBUS=self.nimbus, TEMPEST_TOKEN_FILE=self.token_file)
        if env:
            e.update(env)
        try:
            p = subprocess.run([self.tempest] + args, capture_output=True, text=True,
                               timeout=timeout, env=e, errors="replace")
        except subprocess.TimeoutExpired:
            return "hang", ""
        lines = [l for l in (p.stderr + p.stdout).splitlines() if l.strip()]
        self.last_done = next((l for l in reversed(lines) if l.startswith("done:")), "")
        return p.returncode, (lines[0] if lines else "")[:160]

    def http(self, raw, timeout=15):
        """The status of a raw request, 0 when closed without a reply, 'hang'."""
        try:
            s = socket.create_connection(self.nimbus_addr, timeout=timeout)
        except OSError:
            return "refused-connect"
        try:
            s.sendall(raw)
            data = b""
            while b"\r\n" not in data:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
        except socket.timeout:
            return "hang"
        except OSError:
            return 0
        finally:
            s.close()
        m = re.match(rb"HTTP/1\.[01] (\d{3})", data)
        return int(m.group(1)) if m else 0

    def healthy(self):
        return self.http(b"GET /api/v1/cluster/summary HTTP/1.1\r\nHost: x\r\n\r\n") == 200

    def record(self, cls, name, outcome, detail=""):
        if outcome not in ("crash", "hang") and not self.healthy():
            outcome, detail = "crash", "nimbus unhealthy after: " + str(detail)
        self.results.setdefault(cls, []).append((name, outcome, str(detail)[:160]))

    def worker_pids(self, topology_prefix):
        pids = {}
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                cmd = open(f"/proc/{pid}/cmdline", "rb").read().decode(errors="replace")
            except OSError:
                continue
            if topology_prefix in cmd and "--supervisor-id" in cmd:
                m = re.search(r"--port.(\d+)", cmd)
                if m:
                    pids[int(pid)] = int(m.group(1))
        return pids

    # --- the healthy topology that runs throughout -------------------------
    def start_healthy(self):
        gv = open(os.path.join(ROOT, "examples/cluster-generator-verifier.yaml")).read()
        gv = gv.replace("${ENV-OUT}/cluster-gv", os.path.join(self.out, "gv"))
        gv = gv.replace("value: 0          # unlimited", "value: 500   # paced")
        gv = gv.replace("value: 200000", "value: 60000")
        path = os.path.join(self.out, "healthy.yaml")
        open(path, "w").write(gv)
        code, line = self.cli(["submit", path, "--until-running"], timeout=180)
        if code != 0:
            sys.exit("cannot submit the healthy topology: " + line)

    def healthy_outcome(self):
        log = os.path.join(self.out, "gv", "verifier.log")
        deadline = time.time() + 240
        result = {}
        while time.time() < deadline:
            p = subprocess.run([self.tempest, "verify", log, "--expected", "60000", "--json"],
                               capture_output=True, text=True)
            try:
                result = json.loads(p.stdout)
            except ValueError:
                result = {}
            if result.get("missing") == 0:
                break
            time.sleep(2)
        return result

    # --- classes ------------------------------------------------------------
    def flux_cases(self):
        spout = "spouts:\n  - id: s\n    className: tempest.SequenceSpout\n"
        bolt = ("bolts:\n  - id: b\n    className: tempest.IdentityBolt\n"
                "streams:\n  - from: s\n    to: b\n    grouping: {type: SHUFFLE}\n")
        ok = "name: fine\n" + spout + bolt
        deep = "name: deep\nconfig:\n  k: " + "[" * 100000 + "]" * 100000 + "\n" + spout
        laughs = "name: lol\na: &a [x,x,x,x,x,x,x,x,x]\n"
        for i in range(1, 10):
            laughs += f"{chr(97 + i)}: &{chr(97 + i)} [" + ",".join(["*" + chr(96 + i)] * 9) + "]\n"
        laughs += spout
        cases = [
            ("empty file", ""),
            ("only a comment", "# nothing\n"),
            ("a scalar", "42\n"),
            ("a list", "- a\n- b\n"),
            ("no name", spout + bolt),
            ("no spouts", "name: x\n" + bolt.split("streams")[0]),
            ("unclosed quote", 'name: "x\n' + spout),
            ("tab indentation", "name: x\nspouts:\n\t- id: s\n"),
            ("duplicate key", "name: a\nname: b\n" + spout),
            ("duplicate component id", ok + "  - id: b\n    className: tempest.IdentityBolt\n"),
            ("unknown class", ok.replace("tempest.IdentityBolt", "com.example.Nope")),
            ("class with shell chars", ok.replace("tempest.IdentityBolt", "$(id)")),
            ("parallelism 1e9", ok.replace("tempest.SequenceSpout\n",
                                           "tempest.SequenceSpout\n    parallelism: 1000000000\n")),
            ("numTasks 1e9", ok.replace("tempest.SequenceSpout\n",
                                        "tempest.SequenceSpout\n    numTasks: 1000000000\n")),
            ("parallelism 2^32+1", ok.replace("tempest.SequenceSpout\n",
                                              "tempest.SequenceSpout\n    parallelism: 4294967297\n")),
            ("parallelism 2^31", ok.replace("tempest.SequenceSpout\n",
                                            "tempest.SequenceSpout\n    parallelism: 2147483648\n")),
            ("parallelism -1", ok.replace("tempest.SequenceSpout\n",
                                          "tempest.SequenceSpout\n    parallelism: -1\n")),
            ("parallelism 0", ok.replace("tempest.SequenceSpout\n",
                                         "tempest.SequenceSpout\n    parallelism: 0\n")),
            ("parallelism a string", ok.replace("tempest.SequenceSpout\n",
                                                "tempest.SequenceSpout\n    parallelism: many\n")),
            ("parallelism a float", ok.replace("tempest.SequenceSpout\n",
                                               "tempest.SequenceSpout\n    parallelism: 1.5\n")),
            ("workers 1e9", "config:\n  topology.workers: 1000000000\n" + ok),
            ("ackers 1e9", "config:\n  topology.acker.executors: 1000000000\n" + ok),
            ("ackers -5", "config:\n  topology.acker.executors: -5\n" + ok),
            ("max pending -1", "config:\n  topology.max.spout.pending: -1\n" + ok),
            ("timeout 0", "config:\n  topology.message.timeout.secs: 0\n" + ok),
            ("timeout 2^63", "config:\n  topology.message.timeout.secs: 9223372036854775808\n" + ok),
            ("10,000 bolts", "name: wide\n" + spout + "bolts:\n" + "".join(
                f"  - id: b{i}\n    className: tempest.IdentityBolt\n" for i in range(10000))),
            ("20k-char name", ok.replace("name: fine", "name: " + "x" * 20000)),
            ("200k-char name", ok.replace("name: fine", "name: " + "y" * 200000)),
            ("emoji name", ok.replace("name: fine", "name: storm\U0001F329")),
            ("slash in name", ok.replace("name: fine", "name: a/b")),
            ("dot-dot name", ok.replace("name: fine", "name: ..")),
            ("NUL in name", ok.replace("name: fine", 'name: "a\\0b"')),
            ("newline in name", ok.replace("name: fine", 'name: "a\\nb"')),
            ("component id with slash", ok.replace("id: b\n", "id: a/b\n").replace("to: b", "to: a/b")),
            ("10k-char component id", ok.replace("id: b\n", "id: " + "c" * 10000 + "\n")
             .replace("to: b", "to: " + "c" * 10000)),
            ("stream to unknown", ok.replace("to: b", "to: ghost")),
            ("stream from unknown", ok.replace("from: s", "from: ghost")),
            ("grouping unknown", ok.replace("SHUFFLE", "TELEPATHY")),
            ("fields grouping no fields", ok.replace("{type: SHUFFLE}", "{type: FIELDS}")),
            ("cycle", ok + "  - from: b\n    to: b\n    grouping: {type: SHUFFLE}\n"),
            ("config 100k deep", deep),
            ("billion laughs", laughs),
            ("anchor recursion", "name: r\nx: &x [*x]\n" + spout),
            ("binary garbage", "\x00\x01\x02\xff\xfe" * 100),
            ("invalid UTF-8", None),  # written as bytes below
            ("UTF-16 file", None),
            ("BOM then YAML", "\ufeff" + ok),
            ("huge string property", ok.replace("tempest.SequenceSpout\n",
                                                "tempest.SequenceSpout\n    properties:\n"
                                                "      - {name: payloadBytes, value: 1000000000}\n")),
            ("property of a wrong type", ok.replace("tempest.SequenceSpout\n",
                                                    "tempest.SequenceSpout\n    properties:\n"
                                                    "      - {name: keys, value: [1, 2]}\n")),
            ("constructorArgs nonsense", ok.replace("tempest.IdentityBolt\n",
                                                    "tempest.IdentityBolt\n    constructorArgs: 7\n")),
            ("includes a missing file", "includes:\n  - resource: false\n    file: /nonexistent.yaml\n" + ok),
            ("includes itself", None),
            ("env placeholder unset", ok.replace("name: fine", "name: ${ENV-TEMPEST_UNSET_VAR}")),
            ("shell command bolt", ok.replace("className: tempest.IdentityBolt",
                                              "className: org.apache.storm.flux.wrappers.bolts.FluxShellBolt\n"
                                              "    constructorArgs:\n      - [\"sh\", \"-c\", \"id\"]\n"
                                              "      - [\"out\"]")),
            ("plugin path traversal", "config:\n  topology.plugins: [\"../../../../etc/passwd\"]\n" + ok),
            ("100k streams", "name: many\n" + spout + "bolts:\n  - id: b\n    className: tempest.IdentityBolt\n"
             "streams:\n" + "  - from: s\n    to: b\n    grouping: {type: SHUFFLE}\n" * 100000),
            ("a 30 MB file", ok + "# " + "z" * (30 << 20) + "\n"),
        ]
        return cases

    def run_flux(self):
        d = os.path.join(self.out, "flux")
        os.makedirs(d, exist_ok=True)
        for i, (name, text) in enumerate(self.flux_cases()):
            path = os.path.join(d, f"{i:02d}.yaml")
            if name == "invalid UTF-8":
                open(path, "wb").write(b"name: \xff\xfe\xfd\nspouts: []\n")
            elif name == "UTF-16 file":
                open(path, "wb").write("name: x\nspouts: []\n".encode("utf-16"))
            elif name == "includes itself":
                open(path, "w").write(f"includes:\n  - resource: false\n    file: {path}\nname: x\n")
            else:
                open(path, "w").write(text)
            outcomes = []
            for verb in (["migrate", "check", path], ["local", path, "--duration", "2"],
                         ["submit", path]):
                code, line = self.cli(verb, timeout=60)
                outcomes.append((verb[0], code, line))
                if verb[0] == "submit" and code == 0:
                    # It was valid (or accepted): take it away again.
                    topo = re.search(r"^name: (\S+)", open(path, errors="replace").read(), re.M)
                    if topo:
                        self.cli(["kill", topo.group(1), "-w", "0"], timeout=60)
            worst = "refused"
            for verb, code, line in outcomes:
                if code == "hang":
                    worst = "hang"
                elif isinstance(code, int) and (code < 0 or code >= 128):
                    worst = "crash"
                elif code == 0 and worst == "refused":
                    worst = "accepted"
            detail = "; ".join(f"{v}={c}" + (f" ({l})" if c not in (0,) else "")
                               for v, c, l in outcomes)
            self.record("flux", name, worst, detail)

    def run_config(self):
        d = os.path.join(self.out, "config")
        os.makedirs(d, exist_ok=True)
        cases = [
            ("ui.port: abc", "ui.port: abc\n"),
            ("negative monitor frequency", "supervisor.monitor.frequency.secs: -3\n"),
            ("zero session timeout", "storm.zookeeper.session.timeout: 0\n"),
            ("port 70000", "storm.zookeeper.port: 70000\n"),
            ("servers not a list", "storm.zookeeper.servers: 5\n"),
            ("duplicate key", "ui.port: 1\nui.port: 2\n"),
            ("deep value", "x: " + "[" * 50000 + "]" * 50000 + "\n"),
            ("unclosed quote", 'storm.zookeeper.root: "/tempest\n'),
            ("binary", "\x00\xff\xfe garbage"),
            ("2^64 frame bytes", "tempest.transport.max.frame.bytes: 18446744073709551616\n"),
        ]
        example = os.path.join(ROOT, "examples", "word-count.yaml")
        for i, (name, text) in enumerate(cases):
            path = os.path.join(d, f"{i:02d}.yaml")
            open(path, "w").write(text)
            code, line = self.cli(["--config", path, "local", example, "--duration", "1"], timeout=60)
            if code == "hang":
                outcome = "hang"
            elif code < 0 or code >= 128:
                outcome = "crash"
            else:
                outcome = "accepted" if code == 0 else "refused"
            self.record("config", name, outcome, f"exit {code}: {line}")

    def http_cases(self):
        base = b"GET /api/v1/cluster/summary HTTP/1.1\r\nHost: x\r\n"
        cases = [
            ("empty line", b"\r\n\r\n"),
            ("garbage", b"\x00\xff" * 100 + b"\r\n\r\n"),
            ("HTTP/0.9", b"GET /\r\n\r\n"),
            ("HTTP/2 preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
            ("unknown method", b"BREW /api/v1/cluster/summary HTTP/1.1\r\nHost: x\r\n\r\n"),
            ("lowercase method", b"get /api/v1/cluster/summary HTTP/1.1\r\nHost: x\r\n\r\n"),
            ("no version", b"GET /api/v1/cluster/summary\r\n\r\n"),
            ("version 9.9", b"GET / HTTP/9.9\r\n\r\n"),
            ("80 KiB URL", b"GET /" + b"a" * (80 << 10) + b" HTTP/1.1\r\nHost: x\r\n\r\n"),
            ("80 KiB header", base + b"X-Big: " + b"b" * (80 << 10) + b"\r\n\r\n"),
            ("1000 headers", base + b"".join(b"X-%d: v\r\n" % i for i in range(1000)) + b"\r\n"),
            ("header without colon", base + b"NoColon\r\n\r\n"),
            ("header with NUL", base + b"X-A: a\x00b\r\n\r\n"),
            ("obs-fold header", base + b"X-A: a\r\n  folded\r\n\r\n"),
            ("bare LF", b"GET /api/v1/cluster/summary HTTP/1.1\nHost: x\n\n"),
            ("negative content-length", b"POST /api/v1/topology HTTP/1.1\r\nHost: x\r\n"
             b"Content-Length: -5\r\n\r\n"),
            ("huge content-length", b"POST /api/v1/topology HTTP/1.1\r\nHost: x\r\n"
             b"Content-Length: 99999999999999999999\r\n\r\n"),
            ("two content-lengths", b"POST /api/v1/topology HTTP/1.1\r\nHost: x\r\n"
             b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}"),
            ("CL and chunked", b"POST /api/v1/topology HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n"
             b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
            ("bad chunk size", b"POST /api/v1/topology HTTP/1.1\r\nHost: x\r\n"
             b"Transfer-Encoding: chunked\r\n\r\nzz\r\n\r\n"),
            ("70 KiB trailer", b"POST /api/v1/topology HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked"
             b"\r\n\r\n2\r\n{}\r\n0\r\nX-T: " + b"t" * (70 << 10) + b"\r\n\r\n"),
            ("64 MiB body announced", b"POST /api/v1/topology HTTP/1.1\r\nHost: x\r\n"
             b"Content-Length: 67108864\r\n\r\n{"),
            ("unknown transfer-encoding", b"POST /api/v1/topology HTTP/1.1\r\nHost: x\r\n"
             b"Transfer-Encoding: gzip\r\n\r\n"),
            ("expect 100-continue huge", b"POST /api/v1/topology HTTP/1.1\r\nHost: x\r\n"
             b"Expect: 100-continue\r\nContent-Length: 999999999\r\n\r\n"),
        ]
        paths = ["/..", "/../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/ui/../../etc/passwd",
                 "/%00", "/%ff", "/%", "/%zz", "/api/v1/topology/%00", "/api/v1/topology/..%2f..",
                 "//etc/passwd", "/api/v1/topology/" + "x" * 20000, "/api/v1/../../../",
                 "/index.html%00.js", "/\\..\\..\\windows", "/api/v1/topology/%c0%ae%c0%ae",
                 "/api/v1/cluster/summary?" + "a=b&" * 5000, "/api/v1/cluster/summary#frag",
                 "*", "http://evil/api/v1/cluster/summary", "/api/v1/topology/summary?window=%ff",
                 "/api/v1/topology/x/component/%00", "/api/v1/lag/%2f", "/metrics/../..",
                 "/api/v1/supervisor/summary/" + "%41" * 3000]
        for p in paths:
            cases.append(("path " + p[:40], b"GET " + p.encode() + b" HTTP/1.1\r\nHost: x\r\n\r\n"))
        bodies = ["", "{", "}", "[]", "null", "42", "\"s\"", "{\"flux\": 5}", "{\"flux\": null}",
                  "{\"flux\": []}", "{\"flux\": \"\"}", "{\"flux\": \"name: x\"}",
                  "{\"flux\": \"x\", \"config\": 7}", "{\"flux\": \"x\", \"config\": []}",
                  "[" * 100000, "{\"a\":" * 100000, "\"\\ud800\"", "{\"flux\": \"\\u0000\"}",
                  "\xff\xfe", "{\"flux\": \"x\"," + "\"k\":1," * 100000 + "\"z\":1}",
                  "{\"name\": 5, \"flux\": \"x\"}", "{\"wait\": \"soon\"}", "{\"wait\": -1}",
                  "{\"wait\": 1e400}", "{\"numWorkers\": 1e9}", "{\"numWorkers\": -1}"]
        targets = ["/api/v1/topology", "/api/v1/topology/ghost/kill/0",
                   "/api/v1/topology/ghost/rebalance/0"]
        for i, body in enumerate(bodies):
            target = targets[i % len(targets)]
            b = body.encode(errors="surrogateescape") if isinstance(body, str) else body
            cases.append((f"body {body[:24]!r} to {target.split('/')[-2]}",
                          b"POST " + target.encode() + b" HTTP/1.1\r\nHost: x\r\n"
                          b"Authorization: Bearer " + self.token.encode() + b"\r\n"
                          b"Content-Type: application/json\r\nContent-Length: " +
                          str(len(b)).encode() + b"\r\n\r\n" + b))
        methods = [b"PUT", b"DELETE", b"PATCH", b"OPTIONS", b"TRACE", b"CONNECT", b"HEAD"]
        for m in methods:
            cases.append((m.decode() + " summary", m + b" /api/v1/cluster/summary HTTP/1.1\r\nHost: x\r\n\r\n"))
        while len(cases) < 100:
            n = len(cases)
            cases.append((f"pipelined x{n}", base + b"\r\n" + (b"GARBAGE\r\n\r\n" * (n % 7 + 1))))
        return cases[:100]

    def run_http(self):
        for name, raw in self.http_cases():
            status = self.http(raw)
            if status == "hang":
                outcome = "hang"
            elif status == "refused-connect":
                outcome = "crash"
            elif status == 0 or status >= 400:
                outcome = "refused"
            else:
                outcome = "accepted"
            self.record("http", name, outcome, f"status {status}")
        # Slow and idle connections on top.
        idle = [socket.create_connection(self.nimbus_addr) for _ in range(200)]
        ok = self.healthy()
        for s in idle:
            s.close()
        self.record("http", "200 idle connections (extra)", "refused" if ok else "crash",
                    "nimbus answered meanwhile" if ok else "nimbus did not answer")

    def run_transport(self):
        pids = self.worker_pids("cluster-generator-verifier")
        if not pids:
            self.record("transport", "no worker found", "hang", "")
            return
        pid, port = sorted(pids.items())[0]
        header = lambda n: n.to_bytes(4, "big")
        cases = [
            ("garbage", b"\x7f" * 200),
            ("zero-length frame", header(0)),
            ("64 MiB frame announced", header(64 << 20) + b"\x00" * 44),
            ("2^32-1 frame announced", b"\xff\xff\xff\xff" + b"\x00" * 44),
            ("half a header", b"\x00\x00"),
            ("HTTP request", b"GET / HTTP/1.1\r\n\r\n"),
            ("TLS client hello", bytes.fromhex("16030100a5010000a10303") + b"\x00" * 150),
            ("zeros", b"\x00" * 4096),
            ("a forged hello", b"TPST" + b"\x01" * 60),
            ("1 MiB of noise", os.urandom(1 << 20)),
            ("connect and close", b""),
            ("16 x 64 MiB headers", None),
            ("200 idle connections", None),
            ("slow drip", None),
        ]
        for name, data in cases:
            try:
                if name == "16 x 64 MiB headers":
                    socks = [socket.create_connection(("127.0.0.1", port), timeout=15) for _ in range(16)]
                    for s in socks:
                        s.sendall(header(64 << 20) + b"\x00" * 44)
                    closed = sum(1 for s in socks if _closed(s))
                    detail = f"{closed}/16 closed"
                elif name == "200 idle connections":
                    socks = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(200)]
                    closed = sum(1 for s in socks if _closed(s))
                    detail = f"{closed}/200 closed by the handshake deadline"
                elif name == "slow drip":
                    s = socket.create_connection(("127.0.0.1", port), timeout=15)
                    try:
                        for b in b"\x00\x00\x00\x30abc":
                            s.sendall(bytes([b]))
                            time.sleep(0.5)
                        detail = "closed" if _closed(s) else "open"
                    except OSError:
                        detail = "closed while dripping"
                        s.close()
                else:
                    s = socket.create_connection(("127.0.0.1", port), timeout=15)
                    if data:
                        try:
                            s.sendall(data)
                        except OSError:
                            pass
                    detail = "closed" if _closed(s) else "open after 15 s"
            except OSError as e:
                detail = f"connect failed: {e}"
            alive = os.path.exists(f"/proc/{pid}")
            outcome = "refused" if alive and "open" not in detail and "failed" not in detail else (
                "crash" if not alive else "hang")
            self.record("transport", name, outcome, detail + ("" if alive else "; worker died"))

    MULTILANG_CHILDREN = {
        "exits at once": "import sys; sys.exit(3)",
        "never handshakes": "import time; time.sleep(120)",
        "invalid JSON handshake": "read_msg(); sys.stdout.write('{nope\\nend\\n'); sys.stdout.flush(); time.sleep(60)",
        "pid not a number": "read_msg(); send({'pid': 'x'}); time.sleep(60)",
        "emit nested 100k deep": None,
        "emit 50 MB": None,
        "line without end": "read_msg(); send({'pid': os.getpid()}); sys.stdout.write('x'*100000); sys.stdout.flush(); time.sleep(60)",
        "unknown command": "X:{\"command\": \"selfdestruct\"}",
        "emit to unknown stream": "X:{\"command\": \"emit\", \"stream\": \"ghost\", \"tuple\": [1]}",
        "ack unknown id": "X:{\"command\": \"ack\", \"id\": \"no-such-id\"}",
        "fail unknown id": "X:{\"command\": \"fail\", \"id\": \"no-such-id\"}",
        "anchor to unknown": "X:{\"command\": \"emit\", \"anchors\": [\"nope\"], \"tuple\": [1]}",
        "tuple not a list": "X:{\"command\": \"emit\", \"tuple\": 5}",
        "binary garbage": "G",
        "stderr flood": "E",
        "dies every 100 inputs": "D",
        "invalid JSON per input": "J",
        "sync flood": "X:{\"command\": \"sync\"}",
        "log flood": "X:{\"command\": \"log\", \"msg\": \"spam\"}",
    }

    def child_script(self, name, body):
        prelude = ("import sys, os, json, time\n"
                   "def read_msg():\n"
                   "    lines = []\n"
                   "    while True:\n"
                   "        l = sys.stdin.readline()\n"
                   "        if not l: sys.exit(0)\n"
                   "        if l.strip() == 'end': break\n"
                   "        lines.append(l)\n"
                   "    return json.loads(''.join(lines))\n"
                   "def send(m):\n"
                   "    sys.stdout.write(json.dumps(m) + '\\nend\\n'); sys.stdout.flush()\n")
        handshake = ("conf = read_msg()\n"
                     "open(os.path.join(conf['pidDir'], str(os.getpid())), 'w').close()\n"
                     "send({'pid': os.getpid()})\n")
        if name == "emit nested 100k deep":
            loop = "m = read_msg()\nsys.stdout.write('{\"command\":\"emit\",\"tuple\":' + '['*100000 + ']'*100000 + '}\\nend\\n'); sys.stdout.flush()\ntime.sleep(60)\n"
            return prelude + handshake + loop
        if name == "emit 50 MB":
            loop = "m = read_msg()\nsend({'command':'emit','tuple':['x'*(50<<20)]})\ntime.sleep(60)\n"
            return prelude + handshake + loop
        if body.startswith("X:"):
            cmd = body[2:]
            loop = ("n = 0\nwhile True:\n    m = read_msg()\n    if 'id' not in m: continue\n"
                    f"    sys.stdout.write('{cmd}' + '\\nend\\n')\n"
                    "    send({'command': 'ack', 'id': m['id']})\n")
            return prelude + handshake + loop
        if body == "G":
            return prelude + handshake + "while True:\n    m = read_msg()\n    sys.stdout.write('\\x00\\xff garbage\\nend\\n'); sys.stdout.flush()\n"
        if body == "E":
            return prelude + handshake + "while True:\n    m = read_msg()\n    sys.stderr.write('e'*65536)\n    if 'id' in m: send({'command':'ack','id':m['id']})\n"
        if body == "D":
            return prelude + handshake + "n=0\nwhile True:\n    m = read_msg()\n    n += 1\n    if n >= 100: sys.exit(1)\n    if 'id' in m: send({'command':'ack','id':m['id']})\n"
        if body == "J":
            return prelude + handshake + "while True:\n    m = read_msg()\n    sys.stdout.write('{bad json\\nend\\n'); sys.stdout.flush()\n"
        return prelude + body + "\n"

    def run_multilang(self):
        d = os.path.join(self.out, "multilang")
        for i, (name, body) in enumerate(self.MULTILANG_CHILDREN.items()):
            res = os.path.join(d, f"{i:02d}")
            os.makedirs(res, exist_ok=True)
            open(os.path.join(res, "child.py"), "w").write(self.child_script(name, body))
            flux = os.path.join(res, "topology.yaml")
            open(flux, "w").write(
                "name: multilang-hostile\nconfig:\n  topology.acker.executors: 1\n"
                "  topology.subprocess.timeout.secs: 5\n  topology.message.timeout.secs: 3\n"
                "spouts:\n  - id: s\n    className: tempest.SequenceSpout\n"
                "    properties:\n      - {name: count, value: 2000}\n"
                "bolts:\n  - id: b\n    className: org.apache.storm.flux.wrappers.bolts.FluxShellBolt\n"
                "    constructorArgs:\n      - [\"python3\", \"child.py\"]\n      - [\"out\"]\n"
                "streams:\n  - from: s\n    to: b\n    grouping: {type: SHUFFLE}\n")
            t0 = time.time()
            code, line = self.cli(["local", flux, "--duration", "5", "--resources", res], timeout=90)
            took = time.time() - t0
            if code == "hang":
                outcome = "hang"
            elif code < 0 or code >= 128:
                outcome = "crash"
            else:
                outcome = "refused" if code != 0 else "contained"
            detail = self.last_done if code == 0 else line
            self.record("multilang", name, outcome, f"exit {code} after {took:.0f} s: {detail}")

    def run_znodes(self):
        from kazoo.client import KazooClient
        auth = open(self.zk_auth_file).readline().strip()
        zk = KazooClient(hosts=self.zk, timeout=10, auth_data=[("digest", auth)])
        zk.start(timeout=20)
        root = "/tempest"
        storms = zk.get_children(root + "/storms") if zk.exists(root + "/storms") else []
        healthy = [s for s in storms if s.startswith("cluster-generator-verifier")]
        writes = [
            ("garbage storm", root + "/storms/ghost-1-1", b"\xff\x00garbage"),
            ("empty storm", root + "/storms/ghost-2-1", b""),
            ("garbage assignment", root + "/assignments/ghost-1-1", b"\x08\xff\xff\xff\xff\xff"),
            ("huge assignment", root + "/assignments/ghost-3-1", b"\x0a" * 1000000),
            ("garbage supervisor", root + "/supervisors/ghost-supervisor", b"not protobuf"),
            ("supervisor with huge ports", root + "/supervisors/ghost-2", b"\x10" * 5000),
            ("garbage worker beat", root + "/workerbeats/ghost-1-1", b"\x00"),
            ("garbage nimbus entry", root + "/nimbuses/ghost:1", b"\xde\xad"),
            ("garbage errors node", root + "/errors/ghost-1-1", b"\xff"),
            ("deep child path", root + "/storms/ghost-4-1/a/b/c/d/e", b"x"),
            ("unicode child", root + "/storms/\u2603-1-1", b"x"),
            ("garbage blob", root + "/blobs/ghost", b"\xff" * 100),
            ("offset JSON garbage", "/kafkaspout/ghost/partition_0", b"{not json"),
            ("offset 2^63-1", "/kafkaspout/ghost/partition_1",
             json.dumps({"offset": 9223372036854775807, "partition": 1, "topic": "t",
                         "broker": {"host": "h", "port": 1}, "topology": {"id": "i", "name": "n"}}).encode()),
            ("negative offset", "/kafkaspout/ghost/partition_2",
             json.dumps({"offset": -5, "partition": 2, "topic": "t"}).encode()),
            ("garbage broker registry", "/brokers/ids/77", b"\xff{"),
        ]
        for name, path, data in writes:
            try:
                if zk.exists(path):
                    zk.set(path, data)
                else:
                    zk.create(path, data, makepath=True)
                detail = "written"
            except Exception as e:  # noqa: BLE001 (an ACL refusal is a fine outcome)
                detail = f"refused by ZooKeeper: {type(e).__name__}"
            time.sleep(1)
            alive = self.dev.poll() is None and bool(self.worker_pids("cluster-generator-verifier"))
            self.record("znode", name, "refused" if alive else "crash", detail)
        # Nimbus and the supervisor keep going; clean the garbage up again.
        for name, path, data in writes:
            try:
                top = path.split("/")
                zk.delete(path, recursive=True)
            except Exception:  # noqa: BLE001
                pass
        zk.delete(root + "/storms/ghost-4-1", recursive=True) if zk.exists(root + "/storms/ghost-4-1") else None
        zk.stop()

    def run_kafka(self):
        from kafka import KafkaProducer
        topic = "hostile-records"
        p = KafkaProducer(bootstrap_servers=self.bootstrap, max_request_size=2 << 20)
        records = [
            (b"tombstone", None), (None, b""), (b"", b"x"), (b"k", b"\x00\xff\xfe"),
            (b"\xff" * 1000, b"v"), (None, b"x" * (1 << 20)), (b"k", "\u2603 snowman".encode()),
            (b"k", b"{\"json\": [1,2,3]}"), (b"k", b"line1\nline2\r\nline3"),
            (b"k", b"\x1b[31mansi\x1b[0m"), (None, b"\x00"), (b"k", b"end"),
            (b"dup", b"same"), (b"dup", b"same"),
        ]
        for k, v in records:
            p.send(topic, key=k, value=v, headers=[("h", b"\xff")])
        p.flush(30)
        p.close()
        sink = os.path.join(self.out, "kafka-sink.txt")
        flux = os.path.join(self.out, "kafka.yaml")
        open(flux, "w").write(
            "name: hostile-kafka\nconfig:\n  topology.acker.executors: 1\n"
            "spouts:\n  - id: k\n    className: tempest.KafkaSpout\n    properties:\n"
            f"      - {{name: bootstrap.servers, value: \"{self.bootstrap}\"}}\n"
            f"      - {{name: topics, value: {topic}}}\n"
            f"      - {{name: zkServers, value: \"{self.zk}\"}}\n"
            "      - {name: zkRoot, value: /kafkaspout}\n      - {name: id, value: hostile}\n"
            "      - {name: startOffsetTime, value: -2}\n      - {name: stopAtEnd, value: true}\n"
            "bolts:\n  - id: sink\n    className: tempest.FileSinkBolt\n    properties:\n"
            f"      - {{name: path, value: {sink}}}\n"
            "streams:\n  - from: k\n    to: sink\n    grouping: {type: SHUFFLE}\n")
        code, line = self.cli(["local", flux, "--until-complete"], timeout=120)
        delivered = sum(1 for _ in open(sink, "rb")) if os.path.exists(sink) else 0
        for i, (k, v) in enumerate(records):
            desc = f"key {'null' if k is None else len(k)} B, value {'null' if v is None else len(v)} B"
            ok = code == 0
            self.record("kafka", f"record {i}: {desc}", "accepted" if ok else
                        ("hang" if code == "hang" else "crash"),
                        f"local exit {code}; sink lines {delivered} for {len(records)} records")

    # --- the report ---------------------------------------------------------
    def report(self, healthy):
        summary = {}
        outcomes = ("refused", "accepted", "contained", "crash", "hang")
        print(f"{'class':10} {'inputs':>6} " + " ".join(f"{o:>9}" for o in outcomes))
        for cls in ("flux", "config", "http", "transport", "multilang", "znode", "kafka"):
            rows = self.results.get(cls, [])
            counts = {o: sum(1 for r in rows if r[1] == o) for o in outcomes}
            summary[cls] = dict(counts, inputs=len(rows))
            print(f"{cls:10} {len(rows):6} " + " ".join(f"{counts[o]:9}" for o in outcomes))
        bad = [(c, r) for c, rows in self.results.items() for r in rows if r[1] in ("crash", "hang")]
        for c, (name, outcome, detail) in bad:
            print(f"  {outcome.upper()}: {c}: {name}: {detail}")
        print("healthy topology:", json.dumps({k: healthy.get(k) for k in ("received", "missing", "duplicated")}))
        json.dump({"summary": summary, "healthy": healthy,
                   "results": {c: [list(r) for r in rows] for c, rows in self.results.items()}},
                  open(os.path.join(self.out, "adversarial.json"), "w"), indent=1)
        return 1 if bad or healthy.get("missing") != 0 else 0


def _closed(s, timeout=15):
    s.settimeout(timeout)
    try:
        while True:
            if not s.recv(65536):
                return True
    except socket.timeout:
        return False
    except OSError:
        return True
    finally:
        s.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tempest", default=os.path.join(ROOT, "build/release/cli/tempest"))
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", default="", help="comma-separated classes to run")
    args = ap.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="tempest-adversarial-")
    os.makedirs(out, exist_ok=True)
    os.chmod(out, 0o1777)  # under root, workers run as nobody and write here
    p = Pass(os.path.abspath(args.tempest), out)
    only = set(filter(None, args.only.split(",")))
    try:
        p.start_cluster()
        p.start_healthy()
        for cls, run in (("flux", p.run_flux), ("config", p.run_config), ("http", p.run_http),
                         ("transport", p.run_transport), ("multilang", p.run_multilang),
                         ("znode", p.run_znodes), ("kafka", p.run_kafka)):
            if not only or cls in only:
                print(f"== {cls}", flush=True)
                try:
                    run()
                except Exception as e:  # noqa: BLE001 (a harness fault, not Tempest's)
                    p.results.setdefault(cls, []).append(
                        ("the harness itself", "hang", f"{type(e).__name__}: {e}"))
        healthy = p.healthy_outcome()
    finally:
        p.stop_cluster()
    sys.exit(p.report(healthy))


if __name__ == "__main__":
    main()
