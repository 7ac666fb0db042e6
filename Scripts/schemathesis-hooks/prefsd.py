# Scripts/schemathesis.sh's hooks (SCHEMATHESIS_HOOKS=prefsd): each module says what it mends.
import ndjson  # noqa: F401
import yamlsafe  # noqa: F401
