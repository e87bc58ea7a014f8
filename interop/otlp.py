"""A real OTLP/HTTP traces receiver for interop/otlp.sh, decoding with the official
`opentelemetry-proto` package (pinned in otlp-requirements.txt).

`python otlp.py serve PORT FILE`: answers POST /v1/traces (application/x-protobuf), decodes
each ExportTraceServiceRequest and appends one JSON line per span to FILE.
`python otlp.py check FILE`: asserts the spans `rpcscan gateway --otlp-endpoint` exported
for the session interop/otlp.sh ran (OpenTelemetry MCP conventions, docs/tower.md)."""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status


def value(v):
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


def serve(port, path):
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            ok = self.path == "/v1/traces" and self.headers.get("content-type") == "application/x-protobuf"
            if ok:
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                with open(path, "a") as f:
                    for rs in request.resource_spans:
                        resource = {a.key: value(a.value) for a in rs.resource.attributes}
                        for ss in rs.scope_spans:
                            for span in ss.spans:
                                f.write(json.dumps({
                                    "service": resource.get("service.name"),
                                    "name": span.name,
                                    "kind": Span.SpanKind.Name(span.kind),
                                    "status": Status.StatusCode.Name(span.status.code),
                                    "message": span.status.message,
                                    "trace": span.trace_id.hex(),
                                    "id": span.span_id.hex(),
                                    "parent": span.parent_span_id.hex(),
                                    "attributes": {a.key: value(a.value) for a in span.attributes},
                                }) + "\n")
            answer = ExportTraceServiceResponse().SerializeToString() if ok else b""
            self.send_response(200 if ok else 400)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args):
            pass

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


def check(path):
    spans = [json.loads(line) for line in open(path)]
    failed = []

    def expect(what, ok):
        print(("ok: " if ok else "FAIL: ") + what)
        if not ok:
            failed.append(what)

    def named(name):
        return [s for s in spans if s["name"] == name]

    expect(f"{len(spans)} spans received, all of service rpcscan-gateway",
           bool(spans) and all(s["service"] == "rpcscan-gateway" for s in spans))
    base = {"network.transport": "tcp", "network.protocol.name": "http", "network.protocol.version": "1.1"}
    echo = named("tools/call echo")
    expect("a SERVER span `tools/call echo` with the tool, the id, the session, the protocol version",
           any(s["kind"] == "SPAN_KIND_SERVER" and s["status"] == "STATUS_CODE_UNSET"
               and {**base, "mcp.method.name": "tools/call", "gen_ai.tool.name": "echo",
                    "gen_ai.operation.name": "execute_tool"}.items() <= s["attributes"].items()
               and s["attributes"].get("jsonrpc.request.id", "").isdigit()
               and s["attributes"].get("mcp.session.id")
               and s["attributes"].get("mcp.protocol.version")
               and "error.type" not in s["attributes"] for s in echo))
    init = named("notifications/initialized")
    expect("a SERVER span `notifications/initialized` (a client notification) without a request id",
           any(s["kind"] == "SPAN_KIND_SERVER" and "jsonrpc.request.id" not in s["attributes"]
               and s["attributes"].get("mcp.method.name") == "notifications/initialized" for s in init))
    pings = [s for s in named("ping") if s["attributes"].get("jsonrpc.request.id") == "99"]
    expect("the ping after DELETE: error.type and rpc.response.status_code -32000, status ERROR",
           any(s["status"] == "STATUS_CODE_ERROR" and s["attributes"].get("error.type") == "-32000"
               and s["attributes"].get("rpc.response.status_code") == "-32000" for s in pings))
    expect("the ping before DELETE: no error", any("error.type" not in s["attributes"] for s in pings))
    denied = named("tools/call get-env")
    expect("the denied tool: error.type -32602, rpcscan.rejected policy, the layer's message",
           any(s["status"] == "STATUS_CODE_ERROR" and s["message"] == "Unknown tool"
               and s["attributes"].get("error.type") == "-32602"
               and s["attributes"].get("rpcscan.rejected") == "policy" for s in denied))
    expect("the denied call's span has the traceparent of its params._meta as parent",
           any(s["trace"] == "4bf92f3577b34da6a3ce929d0e0e4736" and s["parent"] == "00f067aa0ba902b7"
               for s in denied))
    expect("the other spans are in traces of their own",
           all(s["trace"] != "4bf92f3577b34da6a3ce929d0e0e4736" for s in spans if s not in denied))
    long = {s["id"]: s for s in named("tools/call trigger-long-running-operation")}
    progress = named("notifications/progress")
    expect("CLIENT spans `notifications/progress` (server notifications) inside their tools/call's span",
           any(s["kind"] == "SPAN_KIND_CLIENT" and s["parent"] in long
               and long[s["parent"]]["trace"] == s["trace"] for s in progress))
    sampling = named("sampling/createMessage")
    expect("a CLIENT span `sampling/createMessage` (a server request) with its id",
           any(s["kind"] == "SPAN_KIND_CLIENT" and "jsonrpc.request.id" in s["attributes"] for s in sampling))
    if failed:
        print("spans received:")
        for s in spans:
            print("  ", json.dumps(s))
        sys.exit(1)


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(int(sys.argv[2]), sys.argv[3])
    else:
        check(sys.argv[2])
