/* Optional native accelerators of the protocol layer (kafkapy.protocol._speedups).
 *
 * Every function has a pure-Python equivalent that is used when this module is not built.
 *
 * walk_records(buf, pos, end, count, require_keys) checks that `count` magic-2 records with offset
 * deltas 0..count-1 exactly fill buf[pos:end], as Kafka 4.4's DefaultRecord.readFrom does for
 * every record of a produced batch (int varints in at most 5 bytes, long varints in 10). It is a
 * line-by-line transliteration of the pure-Python `_walk_records_py` in record_walk.py and must
 * accept and refuse exactly the same inputs: reads are bounded by the whole buffer (a Python
 * IndexError is "truncated record"), never by `end`.
 *
 * Returns (smallest timestamp delta, largest timestamp delta, [indices of keyless records]) when
 * the records are valid (keyless ones collected only with require_keys), else (kind, message):
 * kind 2 is INVALID_RECORD, 3 UNKNOWN_SERVER_ERROR (a record-length varint over 5 bytes, as
 * Kafka 4.4 answers), 4 a wrong offset delta. The caller raises the matching exception.
 *
 * uninitialized_bytearray(n) returns a bytearray of n bytes whose memory is not cleared, for a
 * buffer that is about to be filled completely (a request frame received with recv_into):
 * bytearray(n) would write n zero bytes first, and touch every page of it at once, where this
 * leaves the pages to be touched as the bytes arrive.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#define CORRUPT 1
#define INVALID 2
#define UNREADABLE 3   /* UNKNOWN_SERVER_ERROR, as Kafka 4.4 answers */
#define OFFSET_DELTA 4 /* INVALID_RECORD, but see record_batch.validate_batches */
#define TRUNCATED (-1) /* an index past the buffer: Python's IndexError */
#define TOO_LONG (-2)  /* more than 10 varint bytes */

/* Zigzag varint at *pos (up to 10 bytes). A value that does not fit in int64 saturates to
 * INT64_MAX or INT64_MIN: every caller treats those exactly as Python treats huge ints. */
static int read_varint(const uint8_t *b, Py_ssize_t n, Py_ssize_t *pos, int64_t *out) {
    uint64_t v = 0;
    int shift = 0;
    int huge = 0;
    Py_ssize_t p = *pos;
    for (;;) {
        if (p >= n) return TRUNCATED;
        uint8_t x = b[p++];
        if (shift == 63) {
            if (x & 0x7E) huge = 1;
            v |= (uint64_t)(x & 0x01) << 63;
        } else {
            v |= (uint64_t)(x & 0x7F) << shift;
        }
        if (x < 0x80) break;
        shift += 7;
        if (shift > 63) return TOO_LONG;
    }
    *pos = p;
    if (huge) {
        *out = (v & 1) ? INT64_MIN : INT64_MAX;
    } else {
        *out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
    }
    return 0;
}

/* pos += len for a length already known to be > 0; past the buffer is "beyond" (n + 1). */
static inline Py_ssize_t skip(Py_ssize_t pos, int64_t len, Py_ssize_t n) {
    if (pos > n || len > (int64_t)(n - pos)) return n + 1;
    return pos + (Py_ssize_t)len;
}

#define OVERFLOW (-3) /* a last varint byte with bits past the int's (or long's) width */

/* Kafka's ByteUtils.readVarint: a zigzag int in at most 5 bytes (read_varint32 in
 * record_walk.py). */
static int read_varint32(const uint8_t *b, Py_ssize_t n, Py_ssize_t *pos, int64_t *out) {
    uint32_t v = 0;
    Py_ssize_t p = *pos;
    for (int shift = 0;; shift += 7) {
        if (p >= n) return TRUNCATED;
        uint8_t x = b[p++];
        if (shift == 28) {
            if (x >= 0x80) return TOO_LONG;
            if (x & 0x70) return OVERFLOW;
        }
        v |= (uint32_t)(x & 0x7F) << shift;
        if (x < 0x80) break;
    }
    *pos = p;
    *out = (int64_t)(int32_t)((v >> 1) ^ (uint32_t)(-(int32_t)(v & 1)));
    return 0;
}

/* Kafka's ByteUtils.readVarlong: a zigzag long in at most 10 bytes (read_varlong). */
static int read_varlong(const uint8_t *b, Py_ssize_t n, Py_ssize_t *pos, int64_t *out) {
    uint64_t v = 0;
    Py_ssize_t p = *pos;
    for (int shift = 0;; shift += 7) {
        if (p >= n) return TRUNCATED;
        uint8_t x = b[p++];
        if (shift == 63) {
            if (x >= 0x80) return TOO_LONG;
            if (x & 0x7E) return OVERFLOW;
        }
        v |= (uint64_t)(x & 0x7F) << shift;
        if (x < 0x80) break;
    }
    *pos = p;
    *out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
    return 0;
}

static PyObject *fail(int kind, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    PyObject *msg = PyUnicode_FromFormatV(fmt, ap);
    va_end(ap);
    if (msg == NULL) return NULL;
    return Py_BuildValue("(iN)", kind, msg);
}

#define READ32(dst)                                                                       \
    do {                                                                                  \
        int rc_ = read_varint32(b, n, &pos, &(dst));                                      \
        if (rc_ == TRUNCATED) goto truncated;                                             \
        if (rc_ == TOO_LONG) FAIL(INVALID, "Varint is too long");                        \
        if (rc_ == OVERFLOW) FAIL(INVALID, "varint overflows an int");                   \
    } while (0)

#define AT(p) (((p) >= n) ? -1 : (int)b[(p)])

static PyObject *walk_impl(const uint8_t *b, Py_ssize_t n, Py_ssize_t pos, Py_ssize_t end,
                           long long count, int require_keys) {
    long long i = 0;
    int64_t length, ts, delta, klen, vlen, nh, hk, hv;
    int64_t lo = 0, hi = 0;
    int rc;
    PyObject *keyless = PyList_New(0);
    PyObject *res = NULL;
    if (keyless == NULL) return NULL;
#define FAIL(...)                      \
    do {                               \
        res = fail(__VA_ARGS__);       \
        goto done;                     \
    } while (0)
    while (pos < end) {
        /* record length: Kafka reads it outside its record checks */
        rc = read_varint32(b, n, &pos, &length);
        if (rc == TRUNCATED) goto truncated;
        if (rc == TOO_LONG) FAIL(UNREADABLE, "Varint is too long");
        if (rc == OVERFLOW) FAIL(INVALID, "varint overflows an int");
        if (length < 6 || length > (int64_t)(end - pos))
            FAIL(INVALID, "invalid record length %lld", (long long)length);
        Py_ssize_t rec_end = pos + (Py_ssize_t)length;
        pos += 1; /* attributes */
        rc = read_varlong(b, n, &pos, &ts);
        if (rc == TRUNCATED) goto truncated;
        if (rc == TOO_LONG) FAIL(INVALID, "Varlong is too long");
        if (rc == OVERFLOW) FAIL(INVALID, "varlong overflows a long");
        if (i == 0) {
            lo = hi = ts;
        } else if (ts < lo) {
            lo = ts;
        } else if (ts > hi) {
            hi = ts;
        }
        READ32(delta);
        if (delta != i)
            FAIL(OFFSET_DELTA, "record offset delta %lld, expected %lld", (long long)delta, i);
        READ32(klen);
        if (klen > 0) {
            pos = skip(pos, klen, n);
        } else if (klen < -1) {
            FAIL(INVALID, "invalid key length");
        } else if (klen == -1 && require_keys) {
            PyObject *idx = PyLong_FromLongLong(i);
            if (idx == NULL || PyList_Append(keyless, idx) < 0) {
                Py_XDECREF(idx);
                goto done;
            }
            Py_DECREF(idx);
        }
        READ32(vlen);
        if (vlen > 0) {
            pos = skip(pos, vlen, n);
        } else if (vlen < -1) {
            FAIL(INVALID, "invalid value length");
        }
        READ32(nh);
        if (nh < 0) FAIL(INVALID, "invalid header count");
        for (int64_t h = 0; h < nh; h++) {
            READ32(hk);
            if (hk < 0) FAIL(INVALID, "invalid header key length");
            if (hk > 0) pos = skip(pos, hk, n);
            READ32(hv);
            if (hv > 0) {
                pos = skip(pos, hv, n);
            } else if (hv < -1) {
                FAIL(INVALID, "invalid header value length");
            }
        }
        if (pos != rec_end) FAIL(INVALID, "record fields do not match the record length");
        i += 1;
    }
    if (pos != end) FAIL(INVALID, "records overrun the batch");
    if (i != count) FAIL(INVALID, "batch declares %lld records but holds %lld", count, i);
    res = Py_BuildValue("(LLO)", (long long)lo, (long long)hi, keyless);
    goto done;
truncated:
    res = fail(INVALID, "truncated record");
done:
    Py_DECREF(keyless);
    return res;
#undef FAIL
}

static PyObject *walk_records(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos, end;
    long long count;
    int require_keys;
    if (!PyArg_ParseTuple(args, "y*nnLp", &view, &pos, &end, &count, &require_keys)) return NULL;
    PyObject *res;
    if (pos < 0 || end < pos || end > view.len) {
        res = fail(CORRUPT, "truncated record");
    } else {
        const uint8_t *b = (const uint8_t *)view.buf;
        Py_ssize_t n = view.len;
        res = walk_impl(b, n, pos, end, count, require_keys);
    }
    PyBuffer_Release(&view);
    return res;
}

/* scan_records(buf, pos, end, count): the records of buf[pos:end] (magic 2, decompressed), one
 * tuple each: (offset_delta, timestamp_delta, key bytes or None, value is null, position of
 * the attributes byte, position after the timestamp delta, end of the record). What the log
 * cleaner needs to decide on a record and to copy it without decoding it again. The pure-Python
 * `scan_records_py` in record_scan.py is its reference; the two raise on exactly the same input
 * (ValueError with the same message). Reads never go past `end`. */
static PyObject *scan_records(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos, end;
    long long count;
    if (!PyArg_ParseTuple(args, "y*nnL", &view, &pos, &end, &count)) return NULL;
    PyObject *out = NULL;
    const char *err = NULL;
    if (pos < 0 || end < pos || end > view.len || count < 0) {
        err = "truncated record";
        goto done;
    }
    const uint8_t *b = (const uint8_t *)view.buf;
    Py_ssize_t n = end; /* bounded by the records section */
    out = PyList_New(0);
    if (out == NULL) goto done;
    for (long long i = 0; i < count; i++) {
        int64_t length, ts_delta, off_delta, klen, vlen, nh, hk, hv;
        int rc;
#define SCAN(dst)                                                    \
        rc = read_varint(b, n, &pos, &(dst));                        \
        if (rc == TRUNCATED) { err = "truncated record"; goto fail; } \
        if (rc == TOO_LONG) { err = "varint is too long"; goto fail; }
        SCAN(length);
        if (length < 6 || length > (int64_t)(n - pos)) { err = "invalid record length"; goto fail; }
        Py_ssize_t rec_end = pos + (Py_ssize_t)length;
        Py_ssize_t attr = pos;
        pos += 1;
        SCAN(ts_delta);
        Py_ssize_t body = pos;
        SCAN(off_delta);
        SCAN(klen);
        PyObject *key;
        if (klen >= 0) {
            if (klen > (int64_t)(rec_end - pos)) { err = "truncated record"; goto fail; }
            key = PyBytes_FromStringAndSize((const char *)b + pos, (Py_ssize_t)klen);
            if (key == NULL) goto fail;
            pos += (Py_ssize_t)klen;
        } else if (klen == -1) {
            key = Py_NewRef(Py_None);
        } else {
            err = "invalid key length";
            goto fail;
        }
        rc = read_varint(b, n, &pos, &vlen);
        if (rc != 0 || vlen < -1 || (vlen > 0 && vlen > (int64_t)(rec_end - pos))) {
            Py_DECREF(key);
            err = rc == TOO_LONG ? "varint is too long" : "truncated record";
            if (rc == 0 && vlen < -1) err = "invalid value length";
            goto fail;
        }
        if (vlen > 0) pos += (Py_ssize_t)vlen;
        rc = read_varint(b, n, &pos, &nh);
        if (rc != 0 || nh < 0) {
            Py_DECREF(key);
            err = rc == TOO_LONG ? "varint is too long" : (rc ? "truncated record" : "invalid header count");
            goto fail;
        }
        for (int64_t h = 0; h < nh; h++) {
            rc = read_varint(b, n, &pos, &hk);
            if (rc == 0 && (hk < 0 || hk > (int64_t)(rec_end - pos))) rc = TRUNCATED;
            if (rc == 0) pos += (Py_ssize_t)hk;
            if (rc == 0) rc = read_varint(b, n, &pos, &hv);
            if (rc == 0 && (hv < -1 || (hv > 0 && hv > (int64_t)(rec_end - pos)))) rc = TRUNCATED;
            if (rc != 0) {
                Py_DECREF(key);
                err = rc == TOO_LONG ? "varint is too long" : "truncated record";
                goto fail;
            }
            if (hv > 0) pos += (Py_ssize_t)hv;
        }
        if (pos != rec_end) {
            Py_DECREF(key);
            err = "record fields do not match the record length";
            goto fail;
        }
#undef SCAN
        PyObject *t = Py_BuildValue("(LLNOnnn)", (long long)off_delta, (long long)ts_delta, key,
                                    vlen == -1 ? Py_True : Py_False, attr, body, rec_end);
        if (t == NULL) goto fail;
        int appended = PyList_Append(out, t);
        Py_DECREF(t);
        if (appended < 0) goto fail;
    }
    goto done;
fail:
    Py_CLEAR(out);
done:
    PyBuffer_Release(&view);
    if (err != NULL && !PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, err);
    return out;
}

static PyObject *uninitialized_bytearray(PyObject *self, PyObject *arg) {
    Py_ssize_t n = PyLong_AsSsize_t(arg);
    if (n == -1 && PyErr_Occurred()) return NULL;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "negative size");
        return NULL;
    }
    return PyByteArray_FromStringAndSize(NULL, n);
}

static PyMethodDef methods[] = {
    {"walk_records", walk_records, METH_VARARGS,
     "walk_records(buf, pos, end, count, require_keys) -> None | (kind, message)"},
    {"scan_records", scan_records, METH_VARARGS,
     "scan_records(buf, pos, end, count) -> [(offset_delta, ts_delta, key, value_null, attr_pos, "
     "body_pos, end), ...]"},
    {"uninitialized_bytearray", uninitialized_bytearray, METH_O,
     "uninitialized_bytearray(n) -> bytearray of n bytes, not cleared"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_speedups",
    "Optional native accelerators of kafkapy.protocol (record walk, uninitialized buffers).", -1,
    methods,
};

PyMODINIT_FUNC PyInit__speedups(void) { return PyModule_Create(&module); }
