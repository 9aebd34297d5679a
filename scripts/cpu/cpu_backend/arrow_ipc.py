"""Arrow IPC streams (what Hugging Face `save_to_disk` writes), read and written without pyarrow,
which Debian 12 does not package. The reader takes what a training set needs: integer columns and
List / LargeList / FixedSizeList of integers, uncompressed, little-endian; other columns are
skipped by walking their buffers, and anything it cannot skip safely is refused with the file
and byte offset. The writer writes List<int> columns (the layout of a tokenized dataset).

Layout facts: Arrow columnar format and IPC specification (apache/arrow format/Message.fbs,
Schema.fbs; docs "Arrow Columnar Format", section "Serialization and Interprocess Communication").
Flatbuffer field numbers below are the declaration order in those schemas."""

import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

CONTINUATION = 0xFFFFFFFF
MAX_METADATA = 16 << 20

# union MessageHeader
HEADER_SCHEMA, HEADER_DICTIONARY, HEADER_RECORD_BATCH = 1, 2, 3
# union Type (declaration order from 1)
T_NULL, T_INT, T_FLOAT, T_BINARY, T_UTF8, T_BOOL, T_DECIMAL, T_DATE, T_TIME, T_TIMESTAMP = range(1, 11)
T_INTERVAL, T_LIST, T_STRUCT, T_UNION, T_FIXED_BINARY, T_FIXED_LIST, T_MAP, T_DURATION = range(11, 19)
T_LARGE_BINARY, T_LARGE_UTF8, T_LARGE_LIST = range(19, 22)
# Buffers per node of each type whose children (if any) follow it in the node list.
FLAT_BUFFERS = {T_NULL: 0, T_INT: 2, T_FLOAT: 2, T_BOOL: 2, T_DECIMAL: 2, T_DATE: 2, T_TIME: 2,
                T_TIMESTAMP: 2, T_INTERVAL: 2, T_FIXED_BINARY: 2, T_DURATION: 2,
                T_BINARY: 3, T_UTF8: 3, T_LARGE_BINARY: 3, T_LARGE_UTF8: 3,
                T_LIST: 2, T_LARGE_LIST: 2, T_MAP: 2, T_FIXED_LIST: 1, T_STRUCT: 1}
TYPE_NAMES = {T_INT: "Int", T_LIST: "List", T_LARGE_LIST: "LargeList", T_FIXED_LIST: "FixedSizeList"}


class ArrowError(ValueError):
    """A file the reader refuses: `where` is 'path:offset N'."""

    def __init__(self, path, offset, what):
        super().__init__(f"{path}:offset {offset}: {what}")
        self.path, self.offset, self.what = str(path), offset, what


class _Table:
    """A flatbuffer table inside `buf`, every read bounds-checked (the metadata is untrusted)."""

    def __init__(self, buf: bytes, pos: int, fail):
        self.buf, self.fail = buf, fail
        if pos < 0 or pos + 4 > len(buf):
            fail("flatbuffer table outside its message")
        self.pos = pos
        vt = pos - struct.unpack_from("<i", buf, pos)[0]
        if vt < 0 or vt + 4 > len(buf):
            fail("flatbuffer vtable outside its message")
        self.vt, (self.vt_len, _) = vt, struct.unpack_from("<HH", buf, vt)
        if vt + self.vt_len > len(buf):
            fail("flatbuffer vtable outside its message")

    def _field(self, number):
        slot = 4 + 2 * number
        if slot + 2 > self.vt_len:
            return None
        off = struct.unpack_from("<H", self.buf, self.vt + slot)[0]
        return self.pos + off if off else None

    def scalar(self, number, fmt, default=0):
        at = self._field(number)
        if at is None:
            return default
        if at + struct.calcsize(fmt) > len(self.buf):
            self.fail("flatbuffer field outside its message")
        return struct.unpack_from("<" + fmt, self.buf, at)[0]

    def _indirect(self, at):
        if at + 4 > len(self.buf):
            self.fail("flatbuffer offset outside its message")
        return at + struct.unpack_from("<I", self.buf, at)[0]

    def table(self, number):
        at = self._field(number)
        return None if at is None else _Table(self.buf, self._indirect(at), self.fail)

    def _vector(self, number, elem):
        at = self._field(number)
        if at is None:
            return None, 0
        start = self._indirect(at)
        if start + 4 > len(self.buf):
            self.fail("flatbuffer vector outside its message")
        n = struct.unpack_from("<I", self.buf, start)[0]
        if start + 4 + n * elem > len(self.buf):
            self.fail("flatbuffer vector outside its message")
        return start + 4, n

    def string(self, number):
        start, n = self._vector(number, 1)
        return None if start is None else self.buf[start:start + n].decode("utf-8", "replace")

    def structs(self, number, fmt):
        size = struct.calcsize("<" + fmt)
        start, n = self._vector(number, size)
        return [] if start is None else [struct.unpack_from("<" + fmt, self.buf, start + i * size) for i in range(n)]

    def tables(self, number):
        start, n = self._vector(number, 4)
        return [] if start is None else [_Table(self.buf, self._indirect(start + 4 * i), self.fail) for i in range(n)]


@dataclass
class Field:
    name: str
    type_id: int
    children: list = field(default_factory=list)
    bit_width: int = 0
    signed: bool = True
    list_size: int = 0
    dictionary: bool = False

    def describe(self):
        if self.type_id == T_INT:
            return f"{'Int' if self.signed else 'UInt'}{self.bit_width}"
        inner = ", ".join(c.describe() for c in self.children)
        return f"{TYPE_NAMES.get(self.type_id, f'type {self.type_id}')}<{inner}>" if inner else TYPE_NAMES.get(
            self.type_id, f"type {self.type_id}")

    def int_dtype(self):
        if self.type_id != T_INT or self.bit_width not in (8, 16, 32, 64):
            return None
        return np.dtype(f"<{'i' if self.signed else 'u'}{self.bit_width // 8}")


def _parse_field(t: _Table, fail, depth=0) -> Field:
    if depth > 32:
        fail("schema nests deeper than 32 levels")
    f = Field(name=t.string(0) or "", type_id=t.scalar(2, "B"))
    typ = t.table(3)
    if f.type_id == T_INT and typ is not None:
        f.bit_width, f.signed = typ.scalar(0, "i"), bool(typ.scalar(1, "B"))
    if f.type_id == T_FIXED_LIST and typ is not None:
        f.list_size = typ.scalar(0, "i")
    f.dictionary = t.table(4) is not None
    f.children = [_parse_field(c, fail, depth + 1) for c in t.tables(5)]
    return f


@dataclass
class Column:
    """One integer-list column of a record batch: row i is values[offsets[i]:offsets[i+1]]."""
    values: np.ndarray
    offsets: np.ndarray


@dataclass
class Stream:
    fields: list
    metadata: dict
    batches: list  # [(rows, {name: Column})]

    @property
    def rows(self):
        return sum(r for r, _ in self.batches)


def read_stream(path) -> Stream:
    """Every record batch of an Arrow IPC stream file: its integer and integer-list columns."""
    path = Path(path)
    data = path.read_bytes()
    pos, fields, metadata, batches = 0, None, {}, []
    while True:
        at = pos

        def fail(what, offset=None):
            raise ArrowError(path, at if offset is None else offset, what)

        if pos + 4 > len(data):
            fail("stream ends without the end-of-stream marker: truncated")
        (length,) = struct.unpack_from("<I", data, pos)
        pos += 4
        if length == CONTINUATION:
            if pos + 4 > len(data):
                fail("stream ends inside a message length: truncated")
            (length,) = struct.unpack_from("<I", data, pos)
            pos += 4
        if length == 0:
            break
        if length < 8 or length > MAX_METADATA or length > len(data) - pos:
            fail(f"invalid Arrow message metadata length {length} ({len(data) - pos} bytes left)")
        meta = data[pos:pos + length]
        pos += length
        msg = _Table(meta, struct.unpack_from("<I", meta, 0)[0], fail)
        version, kind = msg.scalar(0, "h"), msg.scalar(1, "B")
        body_len = msg.scalar(3, "q")
        if version not in (3, 4):
            fail(f"Arrow metadata version {version + 1} is not V4 or V5")
        if body_len < 0 or body_len > len(data) - pos:
            fail(f"an Arrow message body needs {body_len} bytes at offset {pos} but the file has {len(data)} bytes")
        body, body_at = data[pos:pos + body_len], pos
        pos += body_len
        header = msg.table(2)
        if header is None:
            fail("Arrow message without a header")
        if kind == HEADER_SCHEMA:
            if fields is not None:
                fail("a second schema in one stream")
            if header.scalar(0, "h") != 0:
                fail("big-endian Arrow data is not supported")
            fields = [_parse_field(f, fail) for f in header.tables(1)]
            for kv in header.tables(3):
                metadata[kv.string(0)] = kv.string(1)
        elif kind == HEADER_RECORD_BATCH:
            if fields is None:
                fail("a record batch before the schema")
            if header.table(3) is not None:
                fail("compressed record batches are not supported: save the dataset uncompressed")
            batches.append(_record_batch(header, fields, body, body_at, fail))
        elif kind != HEADER_DICTIONARY:
            fail(f"unexpected Arrow message type {kind} in a stream")
    if fields is None:
        raise ArrowError(path, 0, "no schema in this Arrow stream")
    return Stream(fields, metadata, batches)


def _record_batch(header, fields, body, body_at, fail):
    rows = header.scalar(0, "q")
    nodes = header.structs(1, "qq")
    buffers = header.structs(2, "qq")
    if rows < 0:
        fail(f"negative record batch length {rows}")
    cursor = {"node": 0, "buffer": 0}

    def take(n_buffers):
        if cursor["node"] >= len(nodes) or cursor["buffer"] + n_buffers > len(buffers):
            fail("record batch has fewer field nodes or buffers than its schema needs")
        node = nodes[cursor["node"]]
        bufs = buffers[cursor["buffer"]:cursor["buffer"] + n_buffers]
        cursor["node"] += 1
        cursor["buffer"] += n_buffers
        for off, ln in bufs:
            if off < 0 or ln < 0 or off + ln > len(body):
                fail(f"a buffer ({off}, {ln}) lies outside the record batch body of {len(body)} bytes", body_at)
        return node, bufs

    def array(buf, dtype, count, what):
        off, ln = buf
        need = count * np.dtype(dtype).itemsize
        if need > ln:
            fail(f"{what}: buffer of {ln} bytes holds fewer than {count} values", body_at + off)
        return np.frombuffer(body, dtype=dtype, count=count, offset=off)

    def skip(f: Field):
        if f.dictionary:
            take(2)
            return
        if f.type_id not in FLAT_BUFFERS:
            fail(f"column '{f.name}' has an Arrow type ({f.type_id}) this reader cannot skip")
        take(FLAT_BUFFERS[f.type_id])
        for c in f.children:
            skip(c)

    def no_nulls(node, name):
        if node[1] != 0:
            fail(f"column '{name}' has {node[1]} null values: a training set cannot hold nulls")

    columns = {}
    for f in fields:
        if f.type_id == T_INT and not f.dictionary and f.int_dtype() is not None:
            node, (_, vals) = take(2)
            no_nulls(node, f.name)
            columns[f.name] = Column(array(vals, f.int_dtype(), node[0], f.name).copy(),
                                     np.arange(node[0] + 1, dtype=np.int64))
        elif (f.type_id in (T_LIST, T_LARGE_LIST, T_FIXED_LIST) and not f.dictionary and len(f.children) == 1
              and f.children[0].int_dtype() is not None and not f.children[0].dictionary):
            if f.type_id == T_FIXED_LIST:
                node, _ = take(1)
                offsets = np.arange(node[0] + 1, dtype=np.int64) * f.list_size
            else:
                node, (_, offs) = take(2)
                offsets = array(offs, "<i4" if f.type_id == T_LIST else "<i8", node[0] + 1,
                                f"offsets of '{f.name}'").astype(np.int64)
            no_nulls(node, f.name)
            child, (_, vals) = take(2)
            no_nulls(child, f.name)
            if node[0] != rows:
                fail(f"column '{f.name}' holds {node[0]} rows, its record batch {rows}")
            if len(offsets) and (offsets[0] < 0 or np.any(np.diff(offsets) < 0) or offsets[-1] > child[0]):
                fail(f"offsets of column '{f.name}' decrease or leave its {child[0]} values", body_at)
            columns[f.name] = Column(array(vals, f.children[0].int_dtype(), child[0], f.name).copy(), offsets)
        else:
            skip(f)
    return rows, columns


# ---- writing -------------------------------------------------------------------------------------

INT_DTYPES = {np.dtype("int8"): 8, np.dtype("int16"): 16, np.dtype("int32"): 32, np.dtype("int64"): 64}


def _int_type(b, bits):
    b.StartObject(2)
    b.PrependInt32Slot(0, bits, 0)
    b.PrependBoolSlot(1, True, False)
    return b.EndObject()


def _field(b, name, type_id, type_table, children):
    n = b.CreateString(name)
    kids = _vector_of_offsets(b, children)
    b.StartObject(7)
    b.PrependUOffsetTRelativeSlot(0, n, 0)
    b.PrependBoolSlot(1, True, False)
    b.PrependUint8Slot(2, type_id, 0)
    b.PrependUOffsetTRelativeSlot(3, type_table, 0)
    b.PrependUOffsetTRelativeSlot(5, kids, 0)
    return b.EndObject()


def _vector_of_offsets(b, offsets):
    b.StartVector(4, len(offsets), 4)
    for o in reversed(offsets):
        b.PrependUOffsetTRelative(o)
    return b.EndVector()


def _message(header_type, build_header, body_len):
    import flatbuffers

    b = flatbuffers.Builder(256)
    header = build_header(b)
    b.StartObject(5)
    b.PrependInt16Slot(0, 4, 0)  # MetadataVersion V5
    b.PrependUint8Slot(1, header_type, 0)
    b.PrependUOffsetTRelativeSlot(2, header, 0)
    b.PrependInt64Slot(3, body_len, 0)
    b.Finish(b.EndObject())
    meta = bytes(b.Output())
    meta += b"\0" * (-(len(meta) + 8) % 8)  # the body starts 8-byte aligned
    return struct.pack("<II", CONTINUATION, len(meta)) + meta


def _schema_message(columns: dict, metadata: dict):
    def build(b):
        fields = []
        for name, dtype in columns.items():
            item = _field(b, "item", T_INT, _int_type(b, INT_DTYPES[dtype]), [])
            b.StartObject(0)
            list_type = b.EndObject()
            fields.append(_field(b, name, T_LIST, list_type, [item]))
        kvs = []
        for k, v in metadata.items():
            ks, vs = b.CreateString(k), b.CreateString(v)
            b.StartObject(2)
            b.PrependUOffsetTRelativeSlot(0, ks, 0)
            b.PrependUOffsetTRelativeSlot(1, vs, 0)
            kvs.append(b.EndObject())
        fv, mv = _vector_of_offsets(b, fields), _vector_of_offsets(b, kvs)
        b.StartObject(5)
        b.PrependUOffsetTRelativeSlot(1, fv, 0)
        b.PrependUOffsetTRelativeSlot(3, mv, 0)
        return b.EndObject()

    return _message(HEADER_SCHEMA, build, 0)


def _structs(b, pairs):
    b.StartVector(16, len(pairs), 8)
    for x, y in reversed(pairs):
        b.Prep(8, 16)
        b.PrependInt64(y)
        b.PrependInt64(x)
    return b.EndVector()


def _batch_message(columns: dict, rows: list):
    """A record batch of `rows` (each {name: sequence of ints}) with List<int> columns."""
    body, nodes, buffers = bytearray(), [], []

    def put(raw: bytes):
        buffers.append((len(body), len(raw)))
        body.extend(raw)
        body.extend(b"\0" * (-len(body) % 8))

    for name, dtype in columns.items():
        seqs = [np.asarray(r[name], dtype=dtype) for r in rows]
        offsets = np.zeros(len(seqs) + 1, dtype="<i4")
        np.cumsum([len(s) for s in seqs], out=offsets[1:])
        nodes += [(len(seqs), 0), (int(offsets[-1]), 0)]
        put(b"")  # no validity bitmap: no nulls
        put(offsets.tobytes())
        put(b"")
        put((np.concatenate(seqs) if seqs else np.zeros(0, dtype)).astype(dtype.newbyteorder("<")).tobytes())

    def build(b):
        nv, bv = _structs(b, nodes), _structs(b, buffers)
        b.StartObject(5)
        b.PrependInt64Slot(0, len(rows), 0)
        b.PrependUOffsetTRelativeSlot(1, nv, 0)
        b.PrependUOffsetTRelativeSlot(2, bv, 0)
        return b.EndObject()

    return _message(HEADER_RECORD_BATCH, build, len(body)) + bytes(body)


def write_stream(path, columns: dict, rows: list, metadata: dict = None, batch_rows: int = 1000):
    """An Arrow IPC stream of List<int> columns ({name: numpy dtype}), `batch_rows` rows a batch."""
    columns = {k: np.dtype(v) for k, v in columns.items()}
    out = bytearray(_schema_message(columns, metadata or {}))
    for start in range(0, len(rows), batch_rows):
        out += _batch_message(columns, rows[start:start + batch_rows])
    out += struct.pack("<II", CONTINUATION, 0)
    Path(path).write_bytes(bytes(out))
