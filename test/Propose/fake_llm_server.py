#!/usr/bin/env python3
"""A fake LLM server for kloop's proposer tests (python3 standard library only).

Listens on 127.0.0.1 on a free port and prints "PORT <n>" on stdout. It speaks
enough of the OpenAI Chat Completions API (POST .../chat/completions) and of
the Anthropic Messages API (POST .../messages) to answer kloop's requests with
scripted replies, and it injects faults.

Script (--script FILE, JSON):
  {"recorded": {NAME: SPEC, ...}, "queue": [NAME or SPEC, ...]}
Each API request takes the next entry of the queue; an empty queue answers
HTTP 500 "script exhausted". POST /__script with {"queue": [...]} replaces the
queue and clears the statistics; GET /stats returns
  {"requests": N, "log": [{"path", "headers", "body", "t"}]}
with every API request received (header names in lower case, t = time.time()).

SPEC members (all optional):
  content      the model's reply text, wrapped in the API's envelope. For an
               Anthropic request that offered tools and content that is a JSON
               object, the reply is a tool_use block with that input.
  model        model ID in the envelope (default "fake-model")
  usage        {"in": N, "out": M} token counts (default 11 and 7)
  cost         a usage.cost figure (USD) to report
  finish       finish_reason / stop_reason (default "stop" / "tool_use" or "end_turn")
  cut_off      the reply hit the token limit: finish_reason "length" (OpenAI) or
               stop_reason "max_tokens" (Anthropic)
  status       HTTP status (default 200); with a status other than 200 the
               body is `body` (default "error")
  body         raw response body for non-200 replies
  raw_body     raw 200 response body (no envelope), e.g. not JSON
  headers      extra response headers, e.g. {"Retry-After": "1"}
  retry_after_date_s  send Retry-After as an HTTP-date this many seconds ahead
  delay_s      sleep this long before answering (a slow server)
  truncate     announce Content-Length 100 bytes longer than sent, then close
  reset        close the connection without answering (TCP reset)
  echo_auth    append the received Authorization / x-api-key header to `body`
"""
import argparse
import email.utils
import json
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
STATE = {"recorded": {}, "queue": [], "log": []}


def next_spec():
    with LOCK:
        if not STATE["queue"]:
            return {"status": 500, "body": "script exhausted"}
        entry = STATE["queue"].pop(0)
    if isinstance(entry, str):
        if entry not in STATE["recorded"]:
            return {"status": 500, "body": "no recorded reply named %r" % entry}
        return STATE["recorded"][entry]
    return entry


def envelope(path, request, spec):
    content = spec.get("content", "")
    usage = spec.get("usage", {"in": 11, "out": 7})
    model = spec.get("model", "fake-model")
    if path.endswith("/messages"):
        block = None
        if request.get("tools"):
            try:
                parsed = json.loads(content)
            except ValueError:
                parsed = None
            if isinstance(parsed, dict):
                block = {"type": "tool_use", "id": "toolu_1",
                         "name": request["tools"][0]["name"], "input": parsed}
        if block is None:
            block = {"type": "text", "text": content}
        u = {"input_tokens": usage["in"], "output_tokens": usage["out"]}
        if "cost" in spec:
            u["cost"] = spec["cost"]
        return {"id": "msg_1", "type": "message", "role": "assistant", "model": model,
                "content": [block],
                "stop_reason": "max_tokens" if spec.get("cut_off") else spec.get(
                    "finish", "tool_use" if block["type"] == "tool_use" else "end_turn"),
                "usage": u}
    u = {"prompt_tokens": usage["in"], "completion_tokens": usage["out"],
         "total_tokens": usage["in"] + usage["out"]}
    if "cost" in spec:
        u["cost"] = spec["cost"]
    return {"id": "chatcmpl-1", "object": "chat.completion", "model": model,
            "choices": [{"index": 0,
                         "finish_reason": "length" if spec.get("cut_off") else spec.get(
                             "finish", "stop"),
                         "message": {"role": "assistant", "content": content}}],
            "usage": u}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, *args):
        pass

    def send_body(self, status, body, ctype="application/json", headers=None):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/stats":
            with LOCK:
                stats = {"requests": len(STATE["log"]), "log": list(STATE["log"])}
            self.send_body(200, json.dumps(stats))
        else:
            self.send_body(404, "not found", "text/plain")

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        if self.path == "/__script":
            script = json.loads(raw)
            with LOCK:
                STATE["queue"] = list(script.get("queue", []))
                STATE["log"] = []
            self.send_body(200, "{}")
            return
        try:
            request = json.loads(raw)
        except ValueError:
            request = None
        with LOCK:
            STATE["log"].append({"path": self.path,
                                 "headers": {k.lower(): v for k, v in self.headers.items()},
                                 "body": request, "t": time.time()})
        if not (self.path.endswith("/chat/completions") or self.path.endswith("/messages")):
            self.send_body(404, json.dumps({"error": "unknown path " + self.path}))
            return
        spec = next_spec()
        try:
            self.answer(spec, request or {})
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout): nothing to do

    def answer(self, spec, request):
        if spec.get("delay_s"):
            time.sleep(spec["delay_s"])
        if spec.get("reset"):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
            return
        headers = dict(spec.get("headers", {}))
        if "retry_after_date_s" in spec:
            headers["Retry-After"] = email.utils.formatdate(
                time.time() + spec["retry_after_date_s"], usegmt=True)
        status = spec.get("status", 200)
        if status != 200:
            body = spec.get("body", "error")
            if spec.get("echo_auth"):
                body += " " + (self.headers.get("Authorization") or
                               self.headers.get("x-api-key") or "")
            self.send_body(status, body, "application/json", headers)
            return
        if "raw_body" in spec:
            body = spec["raw_body"]
        else:
            body = json.dumps(envelope(self.path, request, spec))
        if spec.get("truncate"):
            data = body.encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data) + 100))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.send_body(200, body, "application/json", headers)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--script", help="JSON script file (see the module docstring)")
    args = parser.parse_args()
    if args.script:
        with open(args.script) as f:
            script = json.load(f)
        STATE["recorded"] = script.get("recorded", {})
        STATE["queue"] = list(script.get("queue", []))
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print("PORT %d" % server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
