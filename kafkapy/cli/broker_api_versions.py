"""`kafkapy broker-api-versions` (kafka-broker-api-versions.sh): each broker's API version ranges.

For every broker of the cluster prints `host:port (id: N rack: R isFenced: false) -> (` and then
one API a line, `<TAB>Name(key): min to max [usable: v],` where `usable` is the highest version
both the broker and this tool's protocol library speak, and `Name(key): UNSUPPORTED` for a
client-facing API the broker does not serve.
"""

from __future__ import annotations

import kio.schema.index
from kio.index import load_request_schema
from kio.schema.index import api_key_map

from kafkapy.cli.common import CliError, ToolParser, load_properties
from kafkapy.cli.wire import Connection, connect_any
from kafkapy.protocol import kio_schemas

DESCRIPTION = "This tool helps to retrieve broker version information."

# APIs only a KRaft controller serves: never listed as UNSUPPORTED for a broker.
CONTROLLER_ONLY = frozenset({52, 53, 54, 56, 58, 59, 62, 63, 67, 70, 73, 82})


def api_name(key: int) -> str:
    """Kafka's ApiKeys name, e.g. 18 -> ApiVersions."""
    name = api_key_map.get(key)
    if name is None:
        return "UNKNOWN"
    return "".join(part.capitalize() for part in name.split("_"))


def _versions():
    """The versions this client knows per API: kio's and the project's own newer schemas."""
    kio_schemas.register()
    return kio.schema.index.schema_name_map


def client_max_version(key: int) -> int | None:
    name = api_key_map.get(key)
    if name is None:
        return None
    return max(_versions()[name])


def client_min_version(key: int) -> int | None:
    name = api_key_map.get(key)
    if name is None:
        return None
    return min(_versions()[name])


def api_text(key: int, lo: int, hi: int) -> str:
    name = api_name(key)
    head = f"{name}({key}): " if name != "UNKNOWN" else f"UNKNOWN({key}): "
    text = head + (str(lo) if lo == hi else f"{lo} to {hi}")
    cmax, cmin = client_max_version(key), client_min_version(key)
    if cmax is not None and cmin is not None:
        if cmax < lo:
            text += " [unusable: node too new]"
        elif hi < cmin:
            text += " [unusable: node too old]"
        else:
            text += f" [usable: {min(cmax, hi)}]"
    return text


def format_versions(apis: dict[int, tuple[int, int]]) -> str:
    """The `( ... )` block for one broker, one API a line."""
    texts = {k: api_text(k, lo, hi) for k, (lo, hi) in apis.items()}
    for key in api_key_map:
        if key not in texts and key not in CONTROLLER_ONLY and _is_api(key):
            texts[key] = f"{api_name(key)}({key}): UNSUPPORTED"
    return "(\n\t" + ",\n\t".join(texts[k] for k in sorted(texts)) + "\n)"


def _is_api(key: int) -> bool:
    try:
        load_request_schema(key, client_max_version(key) or 0)
        return True
    except Exception:
        return False


def node_text(node_id: int, host: str, port: int, rack: str | None) -> str:
    return f"{host}:{port} (id: {node_id} rack: {rack if rack else 'null'} isFenced: false)"


def main(argv: list[str]) -> int:
    from kio.schema.api_versions.v3.request import ApiVersionsRequest
    from kio.schema.metadata.v12.request import MetadataRequest

    p = ToolParser("kafka-broker-api-versions", DESCRIPTION)
    p.add_argument("--bootstrap-server", metavar="HOST:PORT", help="REQUIRED: broker(s) to use")
    p.add_argument("--command-config", metavar="FILE", help="client properties (security)")
    opts = p.parse_args(argv)
    if not opts.bootstrap_server:
        raise CliError('Missing required argument "[bootstrap-server]"')
    props = load_properties(opts.command_config)
    with connect_any(opts.bootstrap_server, props=props) as conn:
        md = conn.request(
            MetadataRequest(
                topics=(),
                allow_auto_topic_creation=False,
                include_topic_authorized_operations=False,
            )
        )
    request = ApiVersionsRequest(client_software_name="kafkapy-cli", client_software_version="1")
    for b in md.brokers:
        prefix = node_text(b.node_id, b.host, b.port, b.rack)
        try:
            with Connection(b.host, b.port, props=props) as c:
                resp = c.request(request)
            if resp.error_code != 0:
                print(f"{prefix} -> ERROR: error code {int(resp.error_code)}")
                continue
            apis = {int(a.api_key): (int(a.min_version), int(a.max_version)) for a in resp.api_keys}
            print(f"{prefix} -> {format_versions(apis)}")
        except (ConnectionError, OSError) as e:
            print(f"{prefix} -> ERROR: {e}")
    return 0
