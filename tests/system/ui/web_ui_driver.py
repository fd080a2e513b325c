#!/usr/bin/python3
"""Drives nimbus's web UI in headless Chromium and records what a user sees.

Chromium is controlled through its DevTools protocol over a pipe
(--remote-debugging-pipe: JSON messages separated by NUL bytes, Chromium
reading fd 3 and writing fd 4), so nothing but the Python standard library is
needed and no debugging port is opened. The script opens the UI the way a
user does (the `ui=` link `tempest dev` prints, then pages by their URLs),
clicks, reads the DOM and nimbus's REST API at about the same time, and
writes what it observed to --report as JSON. web_ui_test.cc asserts on that
report; this script fails (exit 1) only when the browser cannot be driven or
a bounded wait runs out, with the reason in the report's "error".

Usage: web_ui_driver.py --ui-url URL --topology ID --spout S --bolt B
                        --topic T --partitions N --out DIR --report FILE
"""

import argparse
import base64
import ctypes
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.request


PR_SET_PDEATHSIG = 1


class DriverError(Exception):
    pass


class Chromium:
    """One headless Chromium process and one page (tab) in it."""

    def __init__(self, binary, log_path, profile_parent, width=1400, height=1000):
        self.profile = tempfile.mkdtemp(prefix="chromium-profile-", dir=profile_parent)
        # Pipes for the DevTools protocol: Chromium reads fd 3, writes fd 4.
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()
        high = [os.dup(fd) for fd in (to_chrome_r, from_chrome_w)]
        for fd in (to_chrome_r, from_chrome_w):
            os.close(fd)
        # fd numbers above 4, so the dup2 below cannot clobber one another.
        while min(high) <= 4:
            high = [os.dup(fd) for fd in high]

        def child_fds():
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)
            # The browser dies with this script, even when it is SIGKILLed.
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)

        args = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                "--disable-background-networking", "--disable-component-update",
                "--remote-debugging-pipe", "--user-data-dir=" + self.profile,
                "--window-size=%d,%d" % (width, height), "about:blank"]
        self._log = open(log_path, "wb")
        # Its own process group: close() can stop every Chromium process.
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self._log,
                                     stderr=subprocess.STDOUT, preexec_fn=child_fds,
                                     pass_fds=(3, 4), start_new_session=True)
        for fd in high:
            os.close(fd)
        self._buffer = b""
        self._next_id = 0
        self._pending = {}
        self.dialogs = []
        self.prompt_answers = []  # what the next prompts are answered with, in order
        self.session = None
        self.width, self.height = width, height

    def _send(self, method, params, session):
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        while data:
            n = os.write(self._to_chrome, data)
            data = data[n:]
        return self._next_id

    def _read_message(self, deadline):
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise DriverError("Chromium did not answer in time")
            ready, _, _ = select.select([self._from_chrome], [], [], min(left, 1.0))
            if not ready:
                if self.proc.poll() is not None:
                    raise DriverError("Chromium exited with %s" % self.proc.returncode)
                continue
            chunk = os.read(self._from_chrome, 1 << 20)
            if not chunk:
                raise DriverError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(raw)

    def _on_event(self, message):
        # A dialog (alert, confirm, prompt) would block the page: record it,
        # answer a prompt with the next of prompt_answers, dismiss the rest.
        # The UI asks for a token only when nimbus answers 401.
        if message.get("method") == "Page.javascriptDialogOpening":
            p = message.get("params", {})
            answer = {"accept": False}
            if p.get("type") == "prompt" and self.prompt_answers:
                answer = {"accept": True, "promptText": self.prompt_answers.pop(0)}
            self.dialogs.append({"type": p.get("type"), "message": p.get("message"),
                                 "answer": answer.get("promptText")})
            self._send("Page.handleJavaScriptDialog", answer, message.get("sessionId"))

    def call(self, method, params=None, timeout=30, session="page"):
        if session == "page":
            session = self.session
        wanted = self._send(method, params, session)
        deadline = time.monotonic() + timeout
        while True:
            message = self._read_message(deadline)
            if "id" not in message:
                self._on_event(message)
                continue
            if message["id"] != wanted:
                continue  # the answer to Page.handleJavaScriptDialog
            if "error" in message:
                raise DriverError("%s: %s" % (method, message["error"].get("message")))
            return message.get("result", {})

    def open_page(self):
        target = self.call("Target.createTarget", {"url": "about:blank"}, session=None)
        attached = self.call("Target.attachToTarget",
                             {"targetId": target["targetId"], "flatten": True}, session=None)
        self.session = attached["sessionId"]
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Network.enable")
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": self.width, "height": self.height, "deviceScaleFactor": 1,
                   "mobile": False})

    def navigate(self, url):
        result = self.call("Page.navigate", {"url": url})
        if result.get("errorText"):
            raise DriverError("navigating to %s: %s" % (url, result["errorText"]))

    def evaluate(self, expression, timeout=30):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True}, timeout=timeout)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise DriverError("page script failed: %s\n%s" % (text, expression))
        return result.get("result", {}).get("value")

    def wait_for(self, expression, what, timeout=60, interval=0.25):
        """Evaluates `expression` until it is truthy; returns its value."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            last = self.evaluate(expression)
            if last:
                return last
            time.sleep(interval)
        raise DriverError("timed out after %d s waiting for %s (last value %r)" %
                          (timeout, what, last))

    def screenshot(self, path):
        """The whole page, not only the viewport."""
        metrics = self.call("Page.getLayoutMetrics")
        size = metrics.get("cssContentSize") or metrics.get("contentSize")
        width = max(self.width, int(size["width"]))
        height = max(300, min(int(size["height"]), 6000))
        shot = self.call("Page.captureScreenshot",
                         {"format": "png", "captureBeyondViewport": True,
                          "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}},
                         timeout=60)
        with open(path, "wb") as f:
            f.write(base64.b64decode(shot["data"]))
        return path

    def close(self):
        try:
            if self.proc.poll() is None:
                try:
                    self.call("Browser.close", session=None, timeout=5)
                except Exception:  # noqa: BLE001 - closing anyway, below
                    pass
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    pass
        finally:
            if self.proc.poll() is None:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait(timeout=10)
            # Helpers (renderer, zygote) that outlived the browser process.
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            for fd in (self._to_chrome, self._from_chrome):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self._log.close()
            shutil.rmtree(self.profile, ignore_errors=True)


def rest(nimbus, path):
    with urllib.request.urlopen("http://%s%s" % (nimbus, path), timeout=20) as r:
        return json.loads(r.read())


# Reads a table of the page as {row data-key: {data-field: text}}.
READ_TABLE = """(function(id) {
  const t = document.getElementById(id);
  if (!t || t.tagName !== "TABLE") return null;
  const rows = {};
  for (const tr of t.querySelectorAll("tbody tr")) {
    const cells = {};
    for (const td of tr.querySelectorAll("td[data-field]")) cells[td.dataset.field] = td.textContent;
    rows[tr.dataset.key || String(Object.keys(rows).length)] = cells;
  }
  return rows;
})"""


def read_table(chrome, table_id):
    return chrome.evaluate(READ_TABLE + "(%s)" % json.dumps(table_id))


def page_state(chrome):
    return chrome.evaluate("""({route: document.getElementById("page").dataset.route,
        loaded: document.getElementById("page").dataset.loaded,
        topology: document.getElementById("page").dataset.topology,
        component: document.getElementById("page").dataset.component,
        hash: location.hash, title: document.title})""")


def wait_loaded(chrome, route, what, timeout=60):
    return chrome.wait_for(
        "(function(){const p=document.getElementById('page');"
        "return p && p.dataset.route===%s && p.dataset.loaded==='1';})()" % json.dumps(route),
        what, timeout)


def as_int(text):
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


SPOUT_COUNTS = ["emitted", "transferred", "acked", "failed"]
BOLT_COUNTS = ["emitted", "transferred", "executed", "acked", "failed"]


def dom_counts(chrome):
    """The per-component counts the spouts and bolts tables show."""
    out = {}
    for table_id, fields in (("spouts", SPOUT_COUNTS), ("bolts", BOLT_COUNTS)):
        rows = read_table(chrome, table_id) or {}
        out[table_id] = {k: {f: as_int(v.get(f)) for f in fields} for k, v in rows.items()}
    return out


def rest_counts(topology):
    out = {"spouts": {}, "bolts": {}}
    for s in topology.get("spouts", []):
        out["spouts"][s["spoutId"]] = {f: s.get(f) for f in SPOUT_COUNTS}
    for b in topology.get("bolts", []):
        out["bolts"][b["boltId"]] = {f: b.get(f) for f in BOLT_COUNTS}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ui-url", required=True)
    ap.add_argument("--nimbus", required=True)
    ap.add_argument("--topology", required=True)
    ap.add_argument("--spout", required=True)
    ap.add_argument("--bolt", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--partitions", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--report", required=True)
    ap.add_argument("--profile-parent", default=None,
                    help="where Chromium's throwaway profile directory goes (default: TMPDIR)")
    ap.add_argument("--chromium", default=os.environ.get("TEMPEST_CHROMIUM", "chromium"))
    ap.add_argument("--timeout", type=float, default=90)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    report = {"steps": []}

    def save():
        with open(a.report + ".tmp", "w") as f:
            json.dump(report, f, indent=1, sort_keys=True)
        os.replace(a.report + ".tmp", a.report)

    def step(name):
        report["steps"].append(name)
        print("step: " + name, flush=True)
        save()

    binary = shutil.which(a.chromium)
    if binary is None:
        report["error"] = ("no %s to run: install it with deploy/install-deps.sh (or name another "
                           "binary in TEMPEST_CHROMIUM)" % a.chromium)
        save()
        print(report["error"], file=sys.stderr)
        return 1
    chrome = Chromium(binary, os.path.join(a.out, "chromium.log"), a.profile_parent)

    def stop(signum, frame):
        # The test's timeout: stop the browser at once, then unwind.
        try:
            os.killpg(chrome.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        raise SystemExit("stopped by signal %d" % signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    base = a.ui_url.split("#", 1)[0]
    topology_url = base + "#/topology/" + a.topology
    try:
        chrome.open_page()

        # 1. The ui= link: the token goes to sessionStorage and out of the
        #    address; the cluster page lists the topology.
        step("cluster page from the ui= link")
        chrome.navigate(a.ui_url)
        wait_loaded(chrome, "cluster", "the cluster page", a.timeout)
        chrome.wait_for("(function(){const r=%s('topologies');return !!r && (%s in r);})()" %
                        (READ_TABLE, json.dumps(a.topology)), "the topology in table#topologies",
                        a.timeout)
        report["cluster"] = {
            "page": page_state(chrome),
            "href": chrome.evaluate("location.href"),
            "token_stored": chrome.evaluate("!!sessionStorage.getItem('tempest.api.token')"),
            "topologies": read_table(chrome, "topologies"),
            "supervisors": read_table(chrome, "supervisors"),
            "nimbuses": read_table(chrome, "nimbuses"),
            "cluster_configuration": read_table(chrome, "cluster-configuration"),
            "topology_link": chrome.evaluate(
                "document.querySelector('#topologies a[data-topology]').getAttribute('href')"),
        }
        chrome.screenshot(os.path.join(a.out, "cluster.png"))

        # 2. The topology page by its URL, in a fresh document (a bookmark).
        step("topology page by URL")
        chrome.navigate("about:blank")
        chrome.navigate(topology_url)
        wait_loaded(chrome, "topology", "the topology page", a.timeout)
        chrome.wait_for(
            "(function(){const r=%s('spouts');if(!r)return false;"
            "return Object.values(r).some(c=>Number(c.acked)>0);})()" % READ_TABLE,
            "a spout with acked > 0 in table#spouts", a.timeout)
        report["topology_active"] = {
            "page": page_state(chrome),
            "state": chrome.evaluate("document.getElementById('topology-state').textContent"),
            "buttons": chrome.evaluate(
                "Object.fromEntries([...document.querySelectorAll('#actions button')]"
                ".map(b=>[b.dataset.action, !b.disabled]))"),
            "dag_nodes": chrome.evaluate(
                "[...document.querySelectorAll('#dag g.node')].map(g=>g.dataset.component)"),
            "dag_edges": chrome.evaluate(
                "[...document.querySelectorAll('#dag g.edge')].map(g=>({from:g.dataset.from,"
                "to:g.dataset.to,label:g.querySelector('text').textContent}))"),
            "topology_stats": read_table(chrome, "topology-stats"),
            "workers": read_table(chrome, "workers"),
            "configuration": read_table(chrome, "configuration"),
        }

        # 3. The lag table lists every partition of the topic, and a total.
        step("lag table")
        expected = json.dumps(["%s/%s/%d" % (a.spout, a.topic, p) for p in range(a.partitions)])
        try:
            chrome.wait_for(
                "(function(){const r=%s('lag');if(!r)return false;"
                "return %s.every(k=>k in r);})()" % (READ_TABLE, expected),
                "every partition in table#lag", a.timeout)
        except DriverError as e:
            report["lag_wait"] = str(e)
        report["lag"] = {"dom": read_table(chrome, "lag"),
                         "rest": rest(a.nimbus, "/api/v1/topology/%s/lag" % a.topology)}
        chrome.screenshot(os.path.join(a.out, "topology.png"))
        save()

        # 4. Deactivate with the button; the page shows INACTIVE.
        step("deactivate")
        chrome.evaluate("document.getElementById('action-deactivate').click()")
        chrome.wait_for("document.getElementById('topology-state').textContent==='INACTIVE'",
                        "the state INACTIVE on the page", a.timeout)
        report["after_deactivate"] = {
            "state": chrome.evaluate("document.getElementById('topology-state').textContent"),
            "rest_status": rest(a.nimbus, "/api/v1/topology/" + a.topology).get("status"),
            "buttons": chrome.evaluate(
                "Object.fromEntries([...document.querySelectorAll('#actions button')]"
                ".map(b=>[b.dataset.action, !b.disabled]))"),
            "notice": chrome.evaluate("document.getElementById('notice').textContent"),
        }
        save()

        # 5. Counts frozen: the tables equal what REST answers right after
        #    reading them, twice in a row.
        step("counts equal REST")
        deadline = time.monotonic() + a.timeout
        previous = None
        matched = None
        while time.monotonic() < deadline:
            dom = dom_counts(chrome)
            api = rest_counts(rest(a.nimbus, "/api/v1/topology/" + a.topology))
            if dom == api and dom == previous:
                matched = {"dom": dom, "rest": api}
                break
            previous = dom if dom == api else None
            report["counts_last"] = {"dom": dom, "rest": api}
            time.sleep(3.5)  # one UI refresh
        report["counts"] = matched or report.get("counts_last")
        report["counts_matched"] = matched is not None
        chrome.screenshot(os.path.join(a.out, "topology-inactive.png"))
        save()

        # 6. A component page by its URL (in the same document: hashchange).
        step("component page by URL")
        chrome.navigate(base + "#/topology/%s/component/%s" % (a.topology, a.bolt))
        wait_loaded(chrome, "component", "the component page", a.timeout)
        chrome.wait_for("!!document.querySelector('#executors tbody tr')",
                        "rows in table#executors", a.timeout)
        component_rest = rest(a.nimbus, "/api/v1/topology/%s/component/%s" % (a.topology, a.bolt))
        report["component"] = {
            "page": page_state(chrome),
            "type": chrome.evaluate("document.getElementById('component-type').textContent"),
            "stats": read_table(chrome, "component-stats"),
            "executors": read_table(chrome, "executors"),
            "inputs": read_table(chrome, "input-stats"),
            "outputs": read_table(chrome, "output-stats"),
            "rest": component_rest,
        }
        chrome.screenshot(os.path.join(a.out, "component.png"))
        save()

        # 7. Back returns to the topology page.
        step("back")
        chrome.evaluate("history.back()")
        wait_loaded(chrome, "topology", "the topology page after Back", a.timeout)
        report["back"] = page_state(chrome)

        # 7b. Forward goes to the component page again; Back once more.
        step("forward")
        chrome.evaluate("history.forward()")
        wait_loaded(chrome, "component", "the component page after Forward", a.timeout)
        report["forward"] = page_state(chrome)
        chrome.evaluate("history.back()")
        wait_loaded(chrome, "topology", "the topology page after Back", a.timeout)

        # 7c. The spout's link in table#spouts opens the spout's page.
        step("spout page by its link")
        chrome.evaluate("document.querySelector('#spouts a[data-component=%s]').click()" %
                        json.dumps(a.spout))
        wait_loaded(chrome, "component", "the spout's page", a.timeout)
        chrome.wait_for("!!document.querySelector('#executors tbody tr')",
                        "rows in the spout's table#executors", a.timeout)
        report["spout_page"] = {
            "page": page_state(chrome),
            "type": chrome.evaluate("document.getElementById('component-type').textContent"),
            "executors": read_table(chrome, "executors"),
            "outputs": read_table(chrome, "output-stats"),
            "inputs_hidden": chrome.evaluate("document.getElementById('input-section').hidden"),
            "rest": rest(a.nimbus, "/api/v1/topology/%s/component/%s" % (a.topology, a.spout)),
        }
        chrome.evaluate("history.back()")
        wait_loaded(chrome, "topology", "the topology page after Back", a.timeout)

        # 8. The window selector puts ?window= in the address.
        step("window selector")
        chrome.evaluate("(function(){const s=document.getElementById('window');s.value='600';"
                        "s.dispatchEvent(new Event('change'));})()")
        wait_loaded(chrome, "topology", "the topology page for the 10 min window", a.timeout)
        report["window"] = {"page": page_state(chrome),
                            "label": chrome.evaluate(
                                "document.getElementById('spouts-window').textContent")}

        # 9. nimbus out of reach (the browser offline): the last data stays,
        #    marked stale; back online, it is fresh again.
        step("stale data")
        chrome.call("Network.emulateNetworkConditions",
                    {"offline": True, "latency": 0, "downloadThroughput": -1,
                     "uploadThroughput": -1})
        chrome.wait_for("document.getElementById('status').dataset.stale==='1' && "
                        "/data from [0-9]+ s ago/.test(document.getElementById('status').textContent)",
                        "the stale-data notice", a.timeout)
        report["stale"] = {
            "status": chrome.evaluate("document.getElementById('status').textContent"),
            "spouts_kept": read_table(chrome, "spouts"),
        }
        chrome.screenshot(os.path.join(a.out, "stale.png"))
        chrome.call("Network.emulateNetworkConditions",
                    {"offline": False, "latency": 0, "downloadThroughput": -1,
                     "uploadThroughput": -1})
        chrome.wait_for("document.getElementById('status').dataset.stale==='0'",
                        "fresh data after going online", a.timeout)
        report["fresh_again"] = chrome.evaluate("document.getElementById('status').textContent")

        # 9b. nimbus takes the requests and never answers (every API request
        #     held by the browser): the page gives up on them and says so.
        step("nimbus does not answer")
        chrome.call("Fetch.enable", {"patterns": [{"urlPattern": "*/api/v1/*",
                                                   "requestStage": "Request"}]})
        chrome.wait_for("document.getElementById('status').dataset.stale==='1'",
                        "the stale-data notice while requests hang", a.timeout)
        report["hang"] = {
            "status": chrome.evaluate("document.getElementById('status').textContent"),
            "spouts_kept": read_table(chrome, "spouts"),
        }
        chrome.call("Fetch.disable")
        chrome.wait_for("document.getElementById('status').dataset.stale==='0'",
                        "fresh data after the requests are released", a.timeout)

        # 10. Rebalance with its prompts (wait 4 s, workers and executors
        #     kept): REBALANCING with a countdown and only kill allowed, then
        #     back to INACTIVE.
        step("rebalance")
        chrome.prompt_answers = ["4", "", ""]
        chrome.evaluate("document.getElementById('action-rebalance').click()")
        chrome.wait_for("document.getElementById('topology-state').textContent==='REBALANCING'",
                        "the state REBALANCING on the page", a.timeout)
        countdown = chrome.wait_for("document.getElementById('countdown').textContent",
                                    "the rebalance countdown", a.timeout)
        report["rebalancing"] = {
            "countdown": countdown,
            "buttons": chrome.evaluate(
                "Object.fromEntries([...document.querySelectorAll('#actions button')]"
                ".map(b=>[b.dataset.action, !b.disabled]))"),
        }
        chrome.screenshot(os.path.join(a.out, "topology-rebalancing.png"))
        chrome.wait_for("document.getElementById('topology-state').textContent==='INACTIVE'",
                        "INACTIVE again after the rebalance", a.timeout)
        report["after_rebalance"] = {
            "state": chrome.evaluate("document.getElementById('topology-state').textContent"),
            "countdown": chrome.evaluate("document.getElementById('countdown').textContent"),
        }

        # 11. Kill with its prompt (wait 120 s): KILLED with the removal
        #     countdown, and no button left.
        step("kill")
        chrome.prompt_answers = ["120"]
        chrome.evaluate("document.getElementById('action-kill').click()")
        chrome.wait_for("document.getElementById('topology-state').textContent==='KILLED'",
                        "the state KILLED on the page", a.timeout)
        countdown = chrome.wait_for("document.getElementById('countdown').textContent",
                                    "the removal countdown", a.timeout)
        report["killed"] = {
            "countdown": countdown,
            "rest_status": rest(a.nimbus, "/api/v1/topology/" + a.topology).get("status"),
            "buttons": chrome.evaluate(
                "Object.fromEntries([...document.querySelectorAll('#actions button')]"
                ".map(b=>[b.dataset.action, !b.disabled]))"),
        }
        report["dialogs"] = chrome.dialogs
        step("done")
        return 0
    except Exception as e:  # noqa: BLE001 - reported, then exit 1
        report["error"] = "%s: %s" % (type(e).__name__, e)
        report["traceback"] = traceback.format_exc()
        report["dialogs"] = chrome.dialogs
        try:
            report["page_at_error"] = page_state(chrome)
            chrome.screenshot(os.path.join(a.out, "error.png"))
        except Exception:  # noqa: BLE001 - the browser may be gone
            pass
        print(report["traceback"], file=sys.stderr)
        return 1
    finally:
        save()
        chrome.close()


if __name__ == "__main__":
    sys.exit(main())
