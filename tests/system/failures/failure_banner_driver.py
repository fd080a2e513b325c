#!/usr/bin/python3
"""Opens a topology's page in headless Chromium and prints its worker-failure banner.

Reuses the DevTools-over-a-pipe Chromium driver of tests/system/ui. Opens the
`ui=` link `tempest dev` printed (the token goes to sessionStorage), then the
topology page, and waits (bounded) until the banner names a failing worker;
prints the banner's text as one JSON string on stdout. Exit 1 with the reason
on stderr when the browser cannot be driven or the wait runs out.

Usage: failure_banner_driver.py --ui-url URL --topology ID --out DIR
"""

import argparse
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ui"))
from web_ui_driver import Chromium  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ui-url", required=True)
    ap.add_argument("--topology", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--chromium", default=os.environ.get("TEMPEST_CHROMIUM", "chromium"))
    ap.add_argument("--timeout", type=float, default=60)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    binary = shutil.which(a.chromium)
    if binary is None:
        print("no %s to run" % a.chromium, file=sys.stderr)
        return 1
    chrome = Chromium(binary, os.path.join(a.out, "chromium.log"), a.out)
    try:
        chrome.open_page()
        chrome.navigate(a.ui_url)
        chrome.wait_for("sessionStorage.length > 0 && location.hash === '#/'", "the token",
                        timeout=a.timeout)
        chrome.evaluate("location.hash = '#/topology/' + %s" % json.dumps(a.topology))
        banner = chrome.wait_for(
            "(() => { const b = document.getElementById('worker-failures');"
            " return b && b.querySelector('.worker-failure') ? b.textContent : ''; })()",
            "the worker-failure banner", timeout=a.timeout)
        chrome.screenshot(os.path.join(a.out, "failure-banner.png"))
        print(json.dumps(banner))
        return 0
    except Exception as e:  # noqa: BLE001 - reported to the test
        print("driver: %s" % e, file=sys.stderr)
        return 1
    finally:
        chrome.close()


if __name__ == "__main__":
    sys.exit(main())
