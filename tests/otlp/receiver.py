"""An OTLP/HTTP trace receiver for the tests: decodes each export with OpenTelemetry's official
protobuf definitions (`opentelemetry-proto`) and appends the decoded spans to a JSON-lines file.

OTLP's JSON encoding is protobuf's JSON mapping except that trace and span ids are hex, not
base64; they are converted before parsing (as collectors do), and parsing refuses any field
the definitions do not have. A body that does not decode gets a 400 and an `error` line.

argv: output_file. Prints the port it listens on.
"""

from __future__ import annotations

import base64
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

ID_FIELDS = ("traceId", "spanId", "parentSpanId")
out_path = sys.argv[1]


def ids_to_base64(value: object) -> object:
    if isinstance(value, dict):
        return {k: (base64.b64encode(bytes.fromhex(v)).decode() if k in ID_FIELDS and isinstance(v, str) else ids_to_base64(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [ids_to_base64(v) for v in value]
    return value


def write(line: dict[str, object]) -> None:
    with open(out_path, "a") as out:
        out.write(json.dumps(line) + "\n")


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        try:
            if self.path != "/v1/traces" or not self.headers.get("content-type", "").startswith("application/json"):
                raise ValueError(f"unexpected {self.path} {self.headers.get('content-type')}")
            request = ExportTraceServiceRequest()
            json_format.Parse(json.dumps(ids_to_base64(json.loads(body))), request, ignore_unknown_fields=False)
        except Exception as error:  # the test reads it
            write({"error": f"{type(error).__name__}: {error}"})
            self.send_response(400)
            self.end_headers()
            return
        spans = []
        for resource_spans in request.resource_spans:
            resource = {a.key: json_format.MessageToDict(a.value) for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    spans.append({
                        "trace_id": span.trace_id.hex(),
                        "span_id": span.span_id.hex(),
                        "parent_span_id": span.parent_span_id.hex(),
                        "name": span.name,
                        "kind": span.kind,
                        "start": span.start_time_unix_nano,
                        "end": span.end_time_unix_nano,
                        "status": span.status.code,
                        "attributes": {a.key: json_format.MessageToDict(a.value) for a in span.attributes},
                        "scope": scope_spans.scope.name,
                        "resource": resource,
                    })
        write({"spans": spans})
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *_: object) -> None:
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
print(server.server_address[1], flush=True)
server.serve_forever()
