#!/usr/bin/env python3
"""memowm's reference external reader: a worked example of the protocol.

An external reader is an HTTP server that memowm asks for the answer loss of
a question given a decoded state (`memowm fit --stage reader|risk|lambda|all
--reader URL` and `memowm bench --reader URL`). This one uses only Python 3's
standard library. Its reader is deliberately simple (it is an example, not a
good reader): it scores each choice by the dot product of the state's
per-slot means with a pseudo-random vector derived from a hash of the choice
text. It is deterministic and it reads the state. Replace score() (or
score_batch(), to batch calls to your model) with your own model, for
example an LLM that reads the question and what the state decodes to.

Run it:

    python3 reader/reference/server.py --port 8080        # or --port 0: any free port
    memowm bench --model m.bundle --in test.arrow --reader http://127.0.0.1:8080/

The first line on stdout is "listening on HOST:PORT" (flushed), so a script
can start it with --port 0 and read the port. Options: --host (default
127.0.0.1), --port (default 8080), --shape SxD (refuse states of another
shape; default any), --verbose (log each request to stderr).

The protocol (docs/reader-protocol.md has it in full):

  Version 1, one item per POST (Content-Type: application/json):
    {"version": 1, "episode": 3, "step": 7, "kind": "typed",
     "subject": "field:email", "question": "What was typed ...?",
     "choices": ["kiwi", "plum"], "answer": "plum",
     "state": {"slots": 32, "dim": 512, "encoding": "f32le-base64", "data": "..."}}
  answered 200 with {"logprobs": [-2.1, -0.1]} (one natural-log score per
  choice, need not be normalised) or {"bits": 0.37} (-log2 P(answer)).

  Version 2, a batch: {"version": 2, "items": [ <version-1 objects without
  "version"> ... ]}, answered {"results": [ {"logprobs": [...]}, ... ]}, one
  result per item, in order.

  The state is Slots x Dim float32 values, slot-major (value c of slot s at
  s*dim + c): "f32le-base64" is their little-endian bytes in base64; without
  "encoding" the values are a JSON list, "values": [...].

  A malformed request gets 400 with {"error": "what is wrong"} (naming the
  item, "items[3]: ...", in a batch); memowm does not retry it. A failure in
  score() gets 500, which memowm retries (as it does 408, 429 and other 5xx).
  GET answers {"reader": ..., "protocols": [1, 2]}, for a health check.
"""

import argparse
import array
import base64
import binascii
import hashlib
import http.server
import json
import math
import socket
import struct
import sys
import traceback

# Limits, as memowm's: a state has at most 1024 slots of 16384 channels.
MAX_SLOTS = 1 << 10
MAX_DIM = 1 << 14
MAX_BODY = 1 << 30  # bytes in one request
MAX_ITEMS = 1 << 16  # items in one batch


class BadRequest(Exception):
    """A malformed request: answered 400 with the message."""


class Item:
    """One (state, question) pair of a request."""

    def __init__(self, obj, state, slots, dim):
        self.episode = obj.get("episode", 0)
        self.step = obj.get("step", 0)
        self.kind = obj.get("kind", "")
        self.subject = obj.get("subject", "")
        self.question = obj.get("question", "")
        self.choices = obj["choices"]
        self.answer = obj["answer"]
        self.state = state  # slots*dim floats, slot-major
        self.slots = slots
        self.dim = dim


# --- the reader: replace these with your model ------------------------------


def choice_vector(choice, slots):
    """A pseudo-random vector in [-1, 1)^slots fixed by the choice's text:
    SHAKE-256 of the text gives slots little-endian uint32 values u, and each
    coordinate is u / 2^31 - 1 (so the same text always gives the same
    vector, on every machine and Python version)."""
    raw = hashlib.shake_256(b"memowm-reference-reader\0" + choice.encode("utf-8")).digest(4 * slots)
    return [u / 2.0**31 - 1.0 for u in struct.unpack("<%dI" % slots, raw)]


def score(item):
    """Returns one log-score per choice of item, in order (natural logs, need
    not be normalised; memowm takes a softmax over the choices).

    This example reads the state through its per-slot means m_s (the mean of
    slot s's dim values) and scores choice c as

        sqrt(dim) * sum_s m_s * v_c[s]        v_c = choice_vector(c, slots)

    Replace it with your model: for an LLM, build a prompt from
    item.question, item.choices and what item.state decodes to, and return
    the model's log-probability of each choice. It may instead return
    {"bits": b}, the answer's loss -log2 P(item.answer), directly."""
    dim = item.dim
    means = [math.fsum(item.state[s * dim:(s + 1) * dim]) / dim for s in range(item.slots)]
    gain = math.sqrt(dim)
    return [gain * math.fsum(m * v for m, v in zip(means, choice_vector(c, item.slots))) for c in item.choices]


def score_batch(items):
    """Scores a list of items (a version-2 batch; a version-1 request is a
    batch of one): one result per item, each a list of log-scores or a
    {"bits": b} dict. Replace it to send a whole batch to your model at
    once."""
    return [score(it) for it in items]


# --- the protocol ------------------------------------------------------------


def shown(v):
    """v as JSON, cut short for an error message."""
    s = json.dumps(v)
    return s if len(s) <= 40 else s[:37] + "..."


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_finite(v):
    """v is a finite JSON number (not a bool; an int that fits a float)."""
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return False
    try:
        return math.isfinite(v)
    except OverflowError:
        return False


def decode_state(obj, where, shape):
    """Checks a request's "state" and returns (values, slots, dim)."""
    if not isinstance(obj, dict):
        raise BadRequest(where + '"state" is missing or not an object')
    slots, dim = obj.get("slots"), obj.get("dim")
    if not is_int(slots) or not 1 <= slots <= MAX_SLOTS:
        raise BadRequest(where + '"state": "slots" is %s, want an integer in 1..%d' % (shown(slots), MAX_SLOTS))
    if not is_int(dim) or not 1 <= dim <= MAX_DIM:
        raise BadRequest(where + '"state": "dim" is %s, want an integer in 1..%d' % (shown(dim), MAX_DIM))
    if shape is not None and (slots, dim) != shape:
        raise BadRequest(where + '"state" is %d x %d; this reader reads %d x %d states' % (slots, dim, shape[0], shape[1]))
    n = slots * dim
    enc = obj.get("encoding")
    if enc is None:
        values = obj.get("values")
        if not isinstance(values, list) or len(values) != n:
            got = "%d values" % len(values) if isinstance(values, list) else "no list"
            raise BadRequest(where + '"state": "values" has %s, want %d x %d = %d' % (got, slots, dim, n))
        for i, v in enumerate(values):
            if not is_finite(v):
                raise BadRequest(where + '"state": "values"[%d] is %s, want a finite number' % (i, shown(v)))
        # The values are float32: memowm writes the shortest decimal that
        # reads back as the same float32, so round them to float32 here (as
        # "f32le-base64" gives them), else the two encodings would differ.
        values = array.array("f", values)
        for i, v in enumerate(values):
            if not math.isfinite(v):
                raise BadRequest(where + '"state": "values"[%d] is outside the float32 range' % i)
        return values, slots, dim
    if enc != "f32le-base64":
        raise BadRequest(where + '"state": unknown "encoding" %s (want "f32le-base64", or "values" without "encoding")' % shown(enc))
    data = obj.get("data")
    if not isinstance(data, str):
        raise BadRequest(where + '"state": "data" is missing or not a string')
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as e:
        raise BadRequest(where + '"state": "data" is not base64 (%s)' % e)
    if len(raw) != 4 * n:
        raise BadRequest(where + '"state": "data" holds %d bytes, want 4 x %d x %d = %d' % (len(raw), slots, dim, 4 * n))
    values = array.array("f")
    values.frombytes(raw)
    if sys.byteorder == "big":
        values.byteswap()
    for i, v in enumerate(values):
        if not math.isfinite(v):
            raise BadRequest(where + '"state": value %d (slot %d, channel %d) is %r' % (i, i // dim, i % dim, v))
    return values, slots, dim


def parse_item(obj, where, shape):
    """Checks one request object (version 1, or an item of a batch)."""
    if not isinstance(obj, dict):
        raise BadRequest(where + "is not a JSON object")
    choices = obj.get("choices")
    if not isinstance(choices, list) or not choices:
        raise BadRequest(where + '"choices" is missing or not a non-empty list')
    for i, c in enumerate(choices):
        if not isinstance(c, str):
            raise BadRequest(where + '"choices"[%d] is %s, not a string' % (i, shown(c)))
    answer = obj.get("answer")
    if not isinstance(answer, str):
        raise BadRequest(where + '"answer" is missing or not a string')
    if answer not in choices:
        raise BadRequest(where + '"answer" %s is not among the %d choices' % (shown(answer), len(choices)))
    for key in ("kind", "subject", "question"):
        if key in obj and not isinstance(obj[key], str):
            raise BadRequest(where + '"%s" is %s, not a string' % (key, shown(obj[key])))
    for key in ("episode", "step"):
        if key in obj and not is_int(obj[key]):
            raise BadRequest(where + '"%s" is %s, not an integer' % (key, shown(obj[key])))
    state, slots, dim = decode_state(obj.get("state"), where, shape)
    return Item(obj, state, slots, dim)


def reject_constant(name):
    raise BadRequest("body is not JSON: %s is not a JSON number" % name)


def check_result(res, item, where):
    """Turns what score_batch returned for item into a response object."""
    if isinstance(res, dict) and set(res) == {"bits"} and is_finite(res["bits"]) and res["bits"] >= 0:
        return {"bits": float(res["bits"])}
    if isinstance(res, (list, tuple)) and len(res) == len(item.choices) and all(is_finite(v) for v in res):
        return {"logprobs": [float(v) for v in res]}
    raise RuntimeError("%sscore() returned %r; want %d finite log-scores or {'bits': b >= 0}" % (where, res, len(item.choices)))


def handle(body, shape):
    """Answers one request body (bytes): returns the response object, or
    raises BadRequest."""
    try:
        req = json.loads(body, parse_constant=reject_constant)
    except ValueError as e:  # UnicodeDecodeError included
        raise BadRequest("body is not JSON: %s" % e)
    if not isinstance(req, dict):
        raise BadRequest("body is not a JSON object")
    version = req.get("version")
    if version == 1:
        item = parse_item(req, "", shape)
        results = score_batch([item])
        if not isinstance(results, list) or len(results) != 1:
            raise RuntimeError("score_batch() returned %r for one item" % (results,))
        return check_result(results[0], item, "")
    if version == 2:
        raw = req.get("items")
        if not isinstance(raw, list):
            raise BadRequest('"items" is missing or not a list')
        if len(raw) > MAX_ITEMS:
            raise BadRequest('"items" has %d items, more than %d' % (len(raw), MAX_ITEMS))
        items = [parse_item(obj, "items[%d]: " % i, shape) for i, obj in enumerate(raw)]
        results = score_batch(items)
        if not isinstance(results, list) or len(results) != len(items):
            raise RuntimeError("score_batch() returned %d results for %d items" % (len(results), len(items)))
        return {"results": [check_result(r, it, "items[%d]: " % i) for i, (r, it) in enumerate(zip(results, items))]}
    raise BadRequest('unsupported "version" %s: this reader speaks versions 1 and 2' % shown(version))


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: memowm reuses connections
    # Headers and body go out in separate writes: without TCP_NODELAY, Nagle's
    # algorithm and the client's delayed ACK add ~40 ms to every answer.
    disable_nagle_algorithm = True
    server_version = "memowm-reference-reader/2"

    def reply(self, status, obj, close=False):
        data = json.dumps(obj, allow_nan=False).encode("utf-8") + b"\n"
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.reply(200, {"reader": "memowm reference reader (reader/reference/server.py)", "protocols": [1, 2]})

    def do_POST(self):
        ctype = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if ctype != "application/json":
            return self.reply(415, {"error": "Content-Type is %s, want application/json" % shown(ctype)}, close=True)
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return self.reply(411, {"error": "chunked bodies are not read: send Content-Length"}, close=True)
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            return self.reply(411, {"error": "Content-Length is missing or not a number"}, close=True)
        if length < 0 or length > MAX_BODY:
            return self.reply(413, {"error": "body of %d bytes; at most %d" % (length, MAX_BODY)}, close=True)
        body = self.rfile.read(length)
        if len(body) != length:
            self.close_connection = True
            return
        try:
            out = handle(body, self.server.shape)
        except BadRequest as e:
            return self.reply(400, {"error": str(e)})
        except Exception as e:  # a bug in score(): 500, which memowm retries
            traceback.print_exc(file=sys.stderr)
            return self.reply(500, {"error": "reader failed: %s: %s" % (type(e).__name__, e)})
        self.reply(200, out)

    def log_message(self, fmt, *args):
        if self.server.verbose:
            super().log_message(fmt, *args)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, addr, shape, verbose):
        if ":" in addr[0]:
            self.address_family = socket.AF_INET6
        self.shape, self.verbose = shape, verbose
        super().__init__(addr, Handler)


def parse_shape(s):
    try:
        slots, dim = (int(x) for x in s.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError("want SLOTSxDIM, e.g. 32x512")
    if not (1 <= slots <= MAX_SLOTS and 1 <= dim <= MAX_DIM):
        raise argparse.ArgumentTypeError("shape %dx%d outside 1..%d x 1..%d" % (slots, dim, MAX_SLOTS, MAX_DIM))
    return slots, dim


def main():
    ap = argparse.ArgumentParser(description="memowm's reference external reader (protocol versions 1 and 2).")
    ap.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    ap.add_argument("--port", type=int, default=8080, help="port to listen on; 0 picks a free one (default 8080)")
    ap.add_argument("--shape", type=parse_shape, default=None, help="refuse states that are not SLOTSxDIM (default: any)")
    ap.add_argument("--verbose", action="store_true", help="log each request to stderr")
    args = ap.parse_args()
    srv = Server((args.host, args.port), args.shape, args.verbose)
    host, port = srv.server_address[:2]
    shown = "[%s]" % host if ":" in host else host
    print("listening on %s:%d" % (shown, port), flush=True)
    print("memowm's flag: --reader http://%s:%d/" % (shown, port), file=sys.stderr, flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        srv.server_close()


if __name__ == "__main__":
    main()
