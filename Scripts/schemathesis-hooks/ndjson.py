# Loaded by Scripts/schemathesis.sh (through prefsd.py): a sync stream (POST /v1/sync:stream)
# takes and answers frames, one JSON text a line (application/x-ndjson). A generated body is
# sent as one frame; an answer is judged by its first frame, which the documented schema
# (SyncStreamAnswer) describes, as it does every other.
import json

import schemathesis


@schemathesis.serializer("application/x-ndjson")
def _ndjson_body(_ctx, value):
    return {"data": (json.dumps(value) + "\n").encode()}


@schemathesis.deserializer("application/x-ndjson")
def _ndjson_first_frame(_ctx, response):
    text = response.content.decode(response.encoding or "utf-8")
    first = next((line for line in text.split("\n") if line.strip()), None)
    if first is None:
        raise ValueError("no frame")
    return json.loads(first)
