#!/usr/bin/env python3
"""Opens an HTML page in headless Chromium and reports what a person would see go wrong.

usage: check_page.py PAGE.html SCREENSHOT.png [--chromium PATH] [--text TEXT]...

Drives Chromium over the DevTools protocol on a pipe (--remote-debugging-pipe: JSON messages ended
by NUL on file descriptors 3 and 4), so it needs no npm package and no network port. Prints one
line per finding, then a summary; exits 0 when the page loaded with no console error, no uncaught
exception, no error log entry (failed loads, Content-Security-Policy violations), every canvas
drew something, and each --text occurs in the page's text; 1 otherwise; 2 when Chromium could not
be driven. The screenshot is the whole page as a PNG.
"""
import argparse
import base64
import json
import os
import pathlib
import select
import shutil
import subprocess
import sys
import tempfile
import time

TIMEOUT_S = 60

# What the page shows, read in the page: the charts web/report.js says it drew, each canvas's size
# and whether any pixel of it is painted, the error banner, the images, and the page's text.
PROBE = """(() => {
  const canvases = [...document.querySelectorAll('canvas')].map(c => {
    const ctx = c.getContext('2d');
    const px = ctx.getImageData(0, 0, c.width, c.height).data;
    let painted = 0;
    for (let i = 3; i < px.length; i += 4) if (px[i] !== 0) painted++;
    return {id: c.id, width: c.clientWidth, height: c.clientHeight, painted};
  });
  const banner = document.getElementById('kloop-chart-error');
  return JSON.stringify({
    drawn: document.body.getAttribute('data-charts-drawn'),
    canvases,
    banner: banner && !banner.hidden ? banner.textContent : null,
    images: document.images.length,
    text: document.body.innerText,
  });
})()"""


class Chromium:
    def __init__(self, exe, profile):
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()
        # The child reads commands on fd 3 and writes replies on fd 4.
        def fds():
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)
        self.proc = subprocess.Popen(
            [exe, "--headless", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-extensions", "--disable-dev-shm-usage", "--user-data-dir=" + profile, "about:blank"],
            preexec_fn=fds, pass_fds=(3, 4), stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.buf = b""
        self.next_id = 0
        self.events = []

    def send(self, method, params=None, session=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_browser, json.dumps(msg).encode() + b"\0")
        return self.wait(lambda m: m.get("id") == self.next_id)

    def wait(self, match, deadline=None):
        deadline = deadline or time.monotonic() + TIMEOUT_S
        while True:
            while b"\0" in self.buf:
                raw, self.buf = self.buf.split(b"\0", 1)
                m = json.loads(raw)
                if "method" in m:
                    self.events.append(m)
                if match(m):
                    if "error" in m:
                        raise RuntimeError("DevTools: %s" % m["error"])
                    return m
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.from_browser], [], [], left)[0]:
                raise RuntimeError("Chromium did not answer within %d s" % TIMEOUT_S)
            chunk = os.read(self.from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe (exit %s)" % self.proc.poll())
            self.buf += chunk

    def close(self):
        try:
            self.send("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def findings_of(events, session):
    """Console errors, uncaught exceptions and error log entries of the page's session."""
    out = []
    for e in events:
        if e.get("sessionId") != session:
            continue
        p = e.get("params", {})
        if e["method"] == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            out.append("uncaught exception: %s" % d.get("exception", {}).get("description", d.get("text")))
        elif e["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            out.append("console.%s: %s" % (p["type"], " ".join(str(a.get("value", a.get("description")))
                                                                for a in p.get("args", []))))
        elif e["method"] == "Log.entryAdded" and p["entry"].get("level") == "error":
            out.append("log error (%s): %s" % (p["entry"].get("source"), p["entry"].get("text")))
    return out


def check(page, shot, exe, texts):
    profile = tempfile.mkdtemp(prefix="kloop-chromium.")
    browser = Chromium(exe, profile)
    try:
        target = browser.send("Target.createTarget", {"url": "about:blank"})["result"]["targetId"]
        session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["result"]["sessionId"]
        for method in ("Runtime.enable", "Log.enable", "Page.enable"):
            browser.send(method, session=session)
        browser.send("Emulation.setDeviceMetricsOverride",
                     {"width": 1200, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session)
        browser.send("Page.navigate", {"url": pathlib.Path(page).resolve().as_uri()}, session)
        browser.wait(lambda m: m.get("method") == "Page.loadEventFired" and m.get("sessionId") == session)
        time.sleep(0.5)  # late console messages
        probe = browser.send("Runtime.evaluate", {"expression": PROBE, "returnByValue": True}, session)
        state = json.loads(probe["result"]["result"]["value"])
        height = browser.send("Page.getLayoutMetrics", session=session)["result"]["cssContentSize"]["height"]
        browser.send("Emulation.setDeviceMetricsOverride",
                     {"width": 1200, "height": int(height) + 1, "deviceScaleFactor": 1, "mobile": False}, session)
        png = browser.send("Page.captureScreenshot", {"format": "png"}, session)["result"]["data"]
        pathlib.Path(shot).write_bytes(base64.b64decode(png))
        findings = findings_of(browser.events, session)
    finally:
        browser.close()
        shutil.rmtree(profile, ignore_errors=True)
    if state["banner"]:
        findings.append("error banner shown: " + state["banner"])
    for c in state["canvases"]:
        ok = c["width"] > 0 and c["height"] > 0 and c["painted"] > 0
        print("canvas %s %dx%d %s" % (c["id"], c["width"], c["height"], "drew" if ok else "EMPTY"))
        if not ok:
            findings.append("canvas %s drew nothing" % c["id"])
    for t in texts:
        if t not in state["text"]:
            findings.append("text not on the page: %r" % t)
    for f in findings:
        print("FINDING: " + f)
    print("charts drawn: %s, canvases: %d, images: %d, findings: %d" %
          (state["drawn"], len(state["canvases"]), state["images"], len(findings)))
    return 0 if not findings else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("page")
    ap.add_argument("screenshot")
    ap.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    ap.add_argument("--text", action="append", default=[])
    a = ap.parse_args()
    try:
        return check(a.page, a.screenshot, a.chromium, a.text)
    except (RuntimeError, OSError, KeyError, json.JSONDecodeError) as e:
        print("check_page.py: cannot drive Chromium: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
