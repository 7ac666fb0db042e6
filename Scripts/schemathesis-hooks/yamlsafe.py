# Loaded by Scripts/schemathesis.sh (SCHEMATHESIS_HOOKS): schemathesis 4.32.5 lets
# yaml.YAMLError escape when it records an answer whose media type is YAML but whose bytes are not
# (an attachment uploaded as application/yaml and downloaded again), and then silently stops
# fuzzing the operations after it. This makes such an answer an ordinary undecodable body.
import schemathesis
from schemathesis.core import media_types
from schemathesis.core.deserialization import deserialize_yaml


@schemathesis.deserializer(*media_types.YAML_MEDIA_TYPES)
def _safe_yaml(_ctx, response):
    import yaml

    try:
        return deserialize_yaml(response.content.decode(response.encoding or "utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ValueError(f"not YAML: {exc}")
