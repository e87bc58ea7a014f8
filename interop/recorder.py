"""A Streamable HTTP upstream for interop/http.sh's hostile-input checks: writes one line
per request it receives to the file given as argv[2] and answers every JSON-RPC request
with an empty result (202 for anything else). `python3 recorder.py PORT FILE`."""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port, record = int(sys.argv[1]), sys.argv[2]


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        with open(record, "ab") as f:
            f.write(b"POST " + body.replace(b"\n", b" ") + b"\n")
        try:
            msg = json.loads(body)
        except ValueError:
            msg = None
        if isinstance(msg, dict) and "method" in msg and "id" in msg:
            answer = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {}}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)
        else:
            self.send_response(202)
            self.send_header("content-length", "0")
            self.end_headers()

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
