"""Keep the word-embedding table int8 in memory: dequantize only the rows a text uses.

The pinned model stores its weights as int8 with a scale, dequantized in the
graph by `Cast(int8) -> Mul(scale)`. onnxruntime folds those constants at load,
so every table becomes float32 in memory. For the matrices that is what fast
inference needs; for the word-embedding table (30,522 x 384) it is 47 MB of
floats of which a query reads a few dozen rows.

`gather_before_dequantize` rewrites that one chain from

    Gather(Mul(Cast(table_q), scale), ids)
to
    Mul(Cast(Gather(table_q, ids)), Gather(scale, ids))

which gives the very same floats (each is still `float(q) * scale` of its row:
one IEEE multiply either way) and keeps most of those 47 MB out of memory
(bench/RESULTS.md#before-and-after-the-performance-work). The model is
pinned by sha256, so the names are known; if they are not found the bytes come
back unchanged and the model loads as shipped.

onnx itself is not a dependency, so this edits the protobuf wire format
directly: ModelProto.graph (field 7) -> GraphProto.node (field 1) -> NodeProto
input (1), output (2), name (3), op_type (4), attribute (5). Every other field
is carried over byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: The chain to rewrite, by the names in the pinned model.
TABLE = "inner.embeddings.word_embeddings.weight"
_TABLE_Q, _TABLE_F, _SCALE = f"{TABLE}_q", f"{TABLE}_f", f"{TABLE}_scale"

_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5
_GRAPH_IN_MODEL, _NODE_IN_GRAPH = 7, 1
_INPUT, _OUTPUT, _NAME, _OP_TYPE = 1, 2, 3, 4
_ONNX_FLOAT = 1
_ATTRIBUTE_INT = 2


def _read_varint(data: bytes | memoryview, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _fields(data: bytes | memoryview) -> list[tuple[int, int, memoryview, memoryview]]:
    """(number, wire type, the whole field as encoded, its payload) for each field, in order."""
    view = memoryview(data)
    out = []
    pos = 0
    while pos < len(view):
        start = pos
        key, pos = _read_varint(view, pos)
        number, wire = key >> 3, key & 7
        if wire == _VARINT:
            _, pos = _read_varint(view, pos)
            payload = view[start:pos]
        elif wire == _I64:
            pos += 8
            payload = view[pos - 8 : pos]
        elif wire == _I32:
            pos += 4
            payload = view[pos - 4 : pos]
        elif wire == _LEN:
            length, pos = _read_varint(view, pos)
            pos += length
            payload = view[pos - length : pos]
        else:
            raise ValueError(f"unsupported wire type {wire}")
        if pos > len(view):
            raise ValueError("truncated field")
        out.append((number, wire, view[start:pos], payload))
    return out


def _len_field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | _LEN) + _varint(len(payload)) + payload


@dataclass
class _Node:
    encoded: memoryview
    op_type: str = ""
    name: str = ""
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)


def _node(encoded: memoryview, payload: memoryview) -> _Node:
    node = _Node(encoded)
    for number, wire, _, value in _fields(payload):
        if wire != _LEN:
            continue
        if number == _INPUT:
            node.inputs.append(bytes(value).decode())
        elif number == _OUTPUT:
            node.outputs.append(bytes(value).decode())
        elif number == _OP_TYPE:
            node.op_type = bytes(value).decode()
        elif number == _NAME:
            node.name = bytes(value).decode()
    return node


def _new_node(op_type: str, name: str, inputs: list[str], outputs: list[str], attributes: bytes = b"") -> bytes:
    body = b"".join(_len_field(_INPUT, i.encode()) for i in inputs)
    body += b"".join(_len_field(_OUTPUT, o.encode()) for o in outputs)
    body += _len_field(_NAME, name.encode()) + _len_field(_OP_TYPE, op_type.encode()) + attributes
    return _len_field(_NODE_IN_GRAPH, body)


def _int_attribute(name: str, value: int) -> bytes:
    # AttributeProto: name (1), i (3), type (20)
    body = _len_field(1, name.encode()) + _varint(3 << 3 | _VARINT) + _varint(value)
    body += _varint(20 << 3 | _VARINT) + _varint(_ATTRIBUTE_INT)
    return _len_field(5, body)


def _rewrite_graph(graph: memoryview) -> bytes | None:
    parts: list[memoryview | bytes] = []
    nodes: dict[str, _Node] = {}
    consumers: dict[str, int] = {}
    entries = _fields(graph)
    for number, wire, encoded, payload in entries:
        if number == _NODE_IN_GRAPH and wire == _LEN:
            node = _node(encoded, payload)
            for name in node.inputs:
                consumers[name] = consumers.get(name, 0) + 1
            for name in node.outputs:
                nodes[name] = node
    cast, mul = nodes.get(_TABLE_F), nodes.get(TABLE)
    if (
        cast is None
        or mul is None
        or cast.op_type != "Cast"
        or cast.inputs != [_TABLE_Q]
        or mul.op_type != "Mul"
        or mul.inputs != [_TABLE_F, _SCALE]
        or consumers.get(_TABLE_F) != 1
        or consumers.get(TABLE) != 1
    ):
        return None
    gathers = [n for n in nodes.values() if n.op_type == "Gather" and n.inputs[:1] == [TABLE]]
    if len(gathers) != 1 or len(gathers[0].inputs) != 2 or len(gathers[0].outputs) != 1:
        return None
    gather = gathers[0]
    ids, out = gather.inputs[1], gather.outputs[0]
    rows_q, rows_f, rows_scale = f"{out}__rows_q", f"{out}__rows_f", f"{out}__rows_scale"
    axis = _int_attribute("axis", 0)
    replacement = b"".join(
        (
            _new_node("Gather", f"{gather.name}__rows_q", [_TABLE_Q, ids], [rows_q], axis),
            _new_node("Cast", f"{gather.name}__rows_cast", [rows_q], [rows_f], _int_attribute("to", _ONNX_FLOAT)),
            _new_node("Gather", f"{gather.name}__rows_scale", [_SCALE, ids], [rows_scale], axis),
            _new_node("Mul", f"{gather.name}__rows_mul", [rows_f, rows_scale], [out]),
        )
    )
    for _, _, encoded, _ in entries:
        if encoded is cast.encoded or encoded is mul.encoded:
            continue
        parts.append(replacement if encoded is gather.encoded else encoded)
    return b"".join(parts)


def gather_before_dequantize(model: bytes) -> bytes:
    """The model with its word-embedding table dequantized per looked-up row (see above);
    the bytes unchanged when the model is not the shape this expects."""
    try:
        entries = _fields(model)
        graphs = [e for e in entries if e[0] == _GRAPH_IN_MODEL and e[1] == _LEN]
        if len(graphs) != 1:
            return model
        graph = _rewrite_graph(graphs[0][3])
    except (ValueError, IndexError, UnicodeDecodeError):
        return model
    if graph is None:
        return model
    return b"".join(_len_field(_GRAPH_IN_MODEL, graph) if e is graphs[0] else e[2] for e in entries)
