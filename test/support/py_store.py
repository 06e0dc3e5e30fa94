#!/usr/bin/env python3
"""A stdlib-only Python peer of the token-capture store, for tokcap's interop tests.

It implements the WRITER side of the store (append, begin_call, mark_incomplete) and the
consumer's freeze, following docs/format.md (sections cited inline). It is written from
that specification only; it is a test peer, not the reference implementation.

Command line (one JSON document per call on stdout, except `hold`):

  py_store.py [--no-plus] DIR append ENTRY_JSON       -> {"ok":true,"digest":..,"duplicate":..}
  py_store.py [--no-plus] DIR begin_call R C          -> {"ok":true}
  py_store.py [--no-plus] DIR mark_incomplete R C     -> {"ok":true}
  py_store.py [--no-plus] DIR freeze R                -> snapshot summary (see cmd_freeze)
  py_store.py DIR read R                              -> entries under LOCK_SH (docs/format.md#read-entries)
  py_store.py DIR state R                             -> the state as read (docs/format.md#state-defaults)
  py_store.py DIR hold R ex|sh SECONDS                -> prints "locked", sleeps, releases
  py_store.py [--no-plus] DIR writer --rollouts r1,r2 --seconds S --seed N --log FILE
                [--gen-ms MS] [--delta-prob P] [--root-prob P] [--until FILE] [--gate FILE]
  py_store.py [--no-plus] canonical JSON_TEXT         -> canonical bytes of the value + LF
  py_store.py [--no-plus] canonical_entry ENTRY_JSON  -> canonical bytes of the entry + LF
  py_store.py digest IDS_JSON                         -> {"ok":true,"digest":..}

A JSON_TEXT / ENTRY_JSON / IDS_JSON argument of "-" is read from stdin. Errors are reported as
{"ok": false, "error": "<Class>: <message>"} with exit status 1 (hold/writer excepted).
`--no-plus` writes positive float exponents without "+" (orjson < 3.11.7, docs/format.md#float-layout).
"""

import errno
import fcntl
import hashlib
import json
import math
import os
import random
import re
import struct
import sys
import time
import uuid

# ---------------------------------------------------------------------------------------------
# docs/format.md#json-writing, docs/format.md#float-layout canonical JSON (orjson with OPT_SORT_KEYS)

PLUS_EXPONENT = True

_ESCAPES = {
    '"': '\\"',
    '\\': '\\\\',
    '\b': '\\b',
    '\t': '\\t',
    '\n': '\\n',
    '\f': '\\f',
    '\r': '\\r',
}
for _c in range(0x20):
    _ESCAPES.setdefault(chr(_c), '\\u%04x' % _c)
_NEEDS_ESCAPE = re.compile('[\x00-\x1f"\\\\]')
_SURROGATE = re.compile('[\ud800-\udfff]')

MIN_I64 = -(2 ** 63)
MAX_U64 = 2 ** 64 - 1


def format_float(x, plus_exponent=None):
    """orjson's float layout (docs/format.md#float-layout), from the shortest round-trip digits of repr()."""
    if plus_exponent is None:
        plus_exponent = PLUS_EXPONENT
    if math.isnan(x) or math.isinf(x):
        return 'null'
    if x == 0:
        return '-0.0' if math.copysign(1.0, x) < 0 else '0.0'
    sign = '-' if x < 0 else ''
    r = repr(abs(x))  # shortest round-trip digits, in Python's own layout ('1e-07', '1e+16', ...)
    if 'e' in r:
        mant, exp = r.split('e')
        k = int(exp)
    else:
        mant, k = r, 0
    if '.' in mant:
        ip, fp = mant.split('.')
    else:
        ip, fp = mant, ''
    digits = ip + fp
    point = len(ip) + k  # |x| = 0.<digits> * 10**point
    stripped = digits.lstrip('0')
    point -= len(digits) - len(stripped)
    d = stripped.rstrip('0')
    n, e = len(d), point
    if 1 <= e <= 16:
        body = d + '0' * (e - n) + '.0' if n <= e else d[:e] + '.' + d[e:]
    elif -4 <= e <= 0:
        body = '0.' + '0' * (-e) + d
    else:
        k = e - 1
        body = d[0] + ('.' + d[1:] if n > 1 else '') + 'e'
        body += ('-' + str(-k)) if k < 0 else (('+' if plus_exponent else '') + str(k))
    return sign + body


def _enc_str(s):
    if _SURROGATE.search(s):
        raise ValueError('str is not valid UTF-8: surrogates not allowed')
    return '"' + _NEEDS_ESCAPE.sub(lambda m: _ESCAPES[m.group(0)], s) + '"'


def _enc(v, out, plus):
    if v is None:
        out.append('null')
    elif v is True:
        out.append('true')
    elif v is False:
        out.append('false')
    elif isinstance(v, int):
        if v < MIN_I64 or v > MAX_U64:
            raise ValueError('Integer exceeds 64-bit range')
        out.append(str(int(v)))
    elif isinstance(v, float):
        out.append(format_float(v, plus))
    elif isinstance(v, str):
        out.append(_enc_str(v))
    elif isinstance(v, (list, tuple)):
        out.append('[')
        for i, x in enumerate(v):
            if i:
                out.append(',')
            _enc(x, out, plus)
        out.append(']')
    elif isinstance(v, dict):
        for k in v:
            if not isinstance(k, str):
                raise TypeError('Dict key must be str')
        out.append('{')
        for i, k in enumerate(sorted(v)):  # Python str order is code-point order
            if i:
                out.append(',')
            out.append(_enc_str(k))
            out.append(':')
            _enc(v[k], out, plus)
        out.append('}')
    else:
        raise TypeError('Type is not JSON serializable: %s' % type(v).__name__)


def canonical_bytes(v, plus_exponent=None):
    """orjson.dumps(v, option=OPT_SORT_KEYS)."""
    if plus_exponent is None:
        plus_exponent = PLUS_EXPONENT
    out = []
    _enc(v, out, plus_exponent)
    return ''.join(out).encode('utf-8')


# ---------------------------------------------------------------------------------------------
# docs/format.md#json-parsing reading (close to orjson: strict UTF-8, no BOM, no NaN/Infinity, no lone surrogates,
# out-of-range integers become floats, float overflow is an error)

def _parse_int(s):
    i = int(s)
    return i if MIN_I64 <= i <= MAX_U64 else float(s)


def _parse_float(s):
    f = float(s)
    if math.isinf(f):
        raise ValueError('number out of range')
    return f


def _bad_constant(name):
    raise ValueError('invalid literal %s' % name)


def _has_surrogate(v):
    if isinstance(v, str):
        return bool(_SURROGATE.search(v))
    if isinstance(v, list):
        return any(_has_surrogate(x) for x in v)
    if isinstance(v, dict):
        return any(_has_surrogate(k) or _has_surrogate(x) for k, x in v.items())
    return False


def loads(data):
    """Parses a JSON document (bytes or str); every failure is a json.JSONDecodeError."""
    if isinstance(data, (bytes, bytearray)):
        if data.startswith(b'\xef\xbb\xbf'):
            raise json.JSONDecodeError('unexpected byte order mark', '', 0)
        try:
            text = bytes(data).decode('utf-8')
        except UnicodeDecodeError:
            raise json.JSONDecodeError('str is not valid UTF-8: surrogates not allowed', '', 0)
    else:
        text = data
    try:
        v = json.loads(text, parse_int=_parse_int, parse_float=_parse_float, parse_constant=_bad_constant)
    except json.JSONDecodeError:
        raise
    except (ValueError, RecursionError) as e:
        raise json.JSONDecodeError(str(e), text, 0)
    if _has_surrogate(v):
        raise json.JSONDecodeError('unpaired surrogate', text, 0)
    return v


# ---------------------------------------------------------------------------------------------
# docs/format.md#token-digests token digests and docs/format.md#entry-digest entry digests

_DOMAIN = b'nemo-gym-tokens'


def compute_digest(ids):
    ids = list(ids)
    if not ids:
        return hashlib.sha256(_DOMAIN).hexdigest()
    for i in ids:
        if i < 0:
            raise ValueError('token ids must be non-negative, got %d' % i)
    h = hashlib.sha256()
    h.update(_DOMAIN + b'\x01' + struct.pack('>Q', len(ids)))
    h.update(struct.pack('>%dQ' % len(ids), *ids))
    return h.hexdigest()


def entry_digest(line_bytes):
    return hashlib.sha256(line_bytes.strip()).hexdigest()


# ---------------------------------------------------------------------------------------------
# docs/format.md#token-entry TokenEntry: defaults, normalisation for writing, minimal validation

ENTRY_DEFAULTS = {
    'schema_version': 5,
    'model': '',
    'routed_experts': None,
    'output_items': [],
    'token_item_index': None,
    'created_at': 0.0,
    'parent_call_id': None,
    'cum_len': None,
    'digest': None,
    'parent_resolution': None,
    'continuation_fingerprint': '',
    'continuation_context_len': 0,
    'continuation_context_digest': '',
    'parent_resolution_reason': '',
    'fingerprint_version': None,
    'prompt_is_delta': False,
    'prefix_requested': False,
    'prefix_supplied': False,
}
REQUIRED = ('rollout_id', 'model_call_id', 'prompt_token_ids', 'generation_token_ids', 'generation_log_probs')
INT_FIELDS = ('schema_version', 'token_item_index', 'cum_len', 'continuation_context_len', 'fingerprint_version')


class ValidationError(ValueError):
    pass


def _as_int(v, field):
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, int):
        return v
    raise ValidationError('%s: Input should be a valid integer' % field)


def validate_entry(obj):
    """Minimal docs/format.md#entry-validation validation: required keys, basic types, the numbered rules 1-7 in order.
    Returns the entry with docs/format.md#entry-fields defaults filled in (unknown keys kept)."""
    if not isinstance(obj, dict):
        raise ValidationError('Input should be a valid dictionary or instance of TokenEntry')
    for k in REQUIRED:
        if k not in obj:
            raise ValidationError('%s: Field required' % k)
    e = dict(ENTRY_DEFAULTS)
    e.update(obj)
    for k in ('rollout_id', 'model_call_id', 'model', 'continuation_fingerprint',
              'continuation_context_digest', 'parent_resolution_reason'):
        if not isinstance(e[k], str):
            raise ValidationError('%s: Input should be a valid string' % k)
    for k in ('prompt_token_ids', 'generation_token_ids', 'generation_log_probs', 'output_items'):
        if not isinstance(e[k], list):
            raise ValidationError('%s: Input should be a valid list' % k)
    for k in ('prompt_token_ids', 'generation_token_ids'):
        e[k] = [_as_int(x, k) for x in e[k]]
    for x in e['generation_log_probs']:
        if not isinstance(x, (int, float)) or isinstance(x, bool):
            raise ValidationError('generation_log_probs: Input should be a valid number')
    if not isinstance(e['created_at'], (int, float)) or isinstance(e['created_at'], bool):
        raise ValidationError('created_at: Input should be a valid number')
    for k in INT_FIELDS:
        if e[k] is not None or k in ('schema_version', 'continuation_context_len'):
            e[k] = _as_int(e[k], k)
    if not all(isinstance(x, dict) for x in e['output_items']):
        raise ValidationError('output_items: Input should be a valid dictionary')
    for k in ('parent_call_id', 'digest'):
        if e[k] is not None and not isinstance(e[k], str):
            raise ValidationError('%s: Input should be a valid string' % k)
    if e['parent_resolution'] not in (None, 'root', 'resolved', 'unresolved'):
        raise ValidationError("parent_resolution: Input should be 'root', 'resolved' or 'unresolved'")
    for k in ('prompt_is_delta', 'prefix_requested', 'prefix_supplied'):
        if not isinstance(e[k], bool):
            if e[k] in (0, 1):
                e[k] = bool(e[k])
            else:
                raise ValidationError('%s: Input should be a valid boolean' % k)

    v = e['schema_version']
    if v > 5:
        raise ValidationError('token record is schema_version %d, but this reader understands up to 5. Upgrade the reader, or point it at records written by a writer it matches.' % v)
    if v < 3:
        raise ValidationError('token record is schema_version %d, below the supported minimum 3. Pre-lineage records were never written in production; regenerate the rollout with a current writer.' % v)
    a, b = len(e['generation_token_ids']), len(e['generation_log_probs'])
    if a != b:
        raise ValidationError('generation_token_ids and generation_log_probs must have the same length (got %d and %d)' % (a, b))
    i = e['token_item_index']
    if i is not None and not (0 <= i < len(e['output_items'])):
        raise ValidationError('token_item_index %d is outside output_items of length %d' % (i, len(e['output_items'])))
    r, p = e['parent_resolution'], e['parent_call_id']
    if r == 'resolved' and (p is None or p == ''):
        raise ValidationError('resolved parent metadata requires parent_call_id')
    if r in ('root', 'unresolved') and p is not None:
        raise ValidationError('%s parent metadata cannot carry parent_call_id' % r)
    if e['prompt_is_delta'] and (p is None or r != 'resolved'):
        raise ValidationError('a delta prompt requires a RESOLVED parent_call_id to reconstruct from')
    return e


def normalize_entry(obj):
    """The entry as the writer serialises it (docs/format.md#canonical-entry): all 23 known fields, floats as floats."""
    e = validate_entry(obj)
    e['created_at'] = float(e['created_at'])
    e['generation_log_probs'] = [float(x) for x in e['generation_log_probs']]
    return e


def entry_canonical_bytes(obj):
    return canonical_bytes(normalize_entry(obj))


# ---------------------------------------------------------------------------------------------
# docs/format.md#layout layout and docs/format.md#locking locking

_ROLLOUT_ID = re.compile(r'[A-Za-z0-9._-]+')


def check_rollout_id(r):
    if not isinstance(r, str) or not _ROLLOUT_ID.fullmatch(r):
        raise ValueError('Invalid rollout id: %r' % (r,))


class Paths:
    def __init__(self, directory, r):
        check_rollout_id(r)
        self.dir = directory
        self.r = r
        base = os.path.join(directory, r)
        self.jsonl = base + '.tokens.jsonl'
        self.state = base + '.tokens.state.json'
        self.intents = base + '.tokens.intents'
        self.incomplete = base + '.tokens.incomplete'
        self.lock = base + '.tokens.lock'


class RolloutLock:
    """flock(2) on <R>.tokens.lock, opened 'a+b'; blocking acquisition; LOCK_UN then close."""

    def __init__(self, paths, exclusive):
        self.path = paths.lock
        self.op = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        self.f = None

    def __enter__(self):
        self.f = open(self.path, 'a+b')
        try:
            fcntl.flock(self.f.fileno(), self.op)
        except BaseException:
            self.f.close()
            raise
        return self

    def __exit__(self, *exc):
        try:
            fcntl.flock(self.f.fileno(), fcntl.LOCK_UN)
        finally:
            self.f.close()
        return False


# ---------------------------------------------------------------------------------------------
# docs/format.md#state state

def default_state():
    return {'entry_digests': {}, 'frozen': False, 'incomplete': False, 'indexed_size': 0,
            'retired': False, 'snapshot_id': '', 'version': 0}


def read_state(paths):
    try:
        with open(paths.state, 'rb') as f:
            data = f.read()
    except FileNotFoundError:
        return default_state()
    state = loads(data)
    if not isinstance(state, dict):
        raise ValueError('Invalid token-capture state for rollout %s' % paths.r)
    return state


def state_version(state):
    return int(state.get('version', 0))


def fsync_dir(directory):
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


_TEMP_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789_'
_temp_rng = random.Random()


def write_state(paths, state, variant='durable'):
    """docs/format.md#state-write atomic replace. variant: 'durable' | 'nondurable' | 'fence'."""
    data = canonical_bytes(state) + b'\n'
    while True:
        name = '.tokens-state-' + ''.join(_temp_rng.choice(_TEMP_ALPHABET) for _ in range(8))
        tmp = os.path.join(paths.dir, name)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            break
        except FileExistsError:
            continue
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if variant in ('durable', 'fence'):
                os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(tmp, paths.state)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if variant == 'durable':
        fsync_dir(paths.dir)


# ---------------------------------------------------------------------------------------------
# docs/format.md#operations operations

def _append_bytes(path, data):
    """Appends in one write (O_APPEND, created 0666 & ~umask), fsyncs; returns the new size."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        n = os.write(fd, data)
        if n != len(data):  # never expected for a regular file; finish the line anyway
            view = memoryview(data)[n:]
            while view:
                view = view[os.write(fd, view):]
        os.fsync(fd)
        return os.fstat(fd).st_size
    finally:
        os.close(fd)


def _retired_error(r):
    return RuntimeError('Token capture for rollout %s is retired' % r)


def _frozen_error(r):
    return RuntimeError('Token capture for rollout %s is already frozen' % r)


def sync_index(paths, state):
    """docs/format.md#reconcile reconciliation, under EX. Updates `state` in memory; returns True when changed."""
    try:
        size = os.stat(paths.jsonl).st_size
    except FileNotFoundError:
        size = 0
    digests = state.get('entry_digests')
    offset_value = state.get('indexed_size')
    legacy = False
    if isinstance(digests, dict):
        index = dict(digests)
    else:
        index, legacy = {}, True
    if isinstance(offset_value, int):  # a bool counts, as in the reference
        offset = int(offset_value)
    else:
        offset, legacy = 0, True
    if offset < 0 or offset > size:
        raise ValueError('Invalid token-capture index offset for rollout %s' % paths.r)
    if offset == size and not legacy:
        return False
    tail = b''
    if size > 0:
        with open(paths.jsonl, 'rb') as f:
            f.seek(offset)
            tail = f.read(size - offset)
    pos, recovered = 0, 0
    while pos < len(tail):
        nl = tail.find(b'\n', pos)
        end = nl if nl >= 0 else len(tail)
        line = tail[pos:end].strip()
        if line:
            try:
                obj = loads(line)
            except json.JSONDecodeError:
                rest = tail[end + 1:] if nl >= 0 else b''
                if rest.strip():
                    raise
                # A torn final write: truncate J to the start of the line (not fsynced).
                os.truncate(paths.jsonl, offset + pos)
                size = offset + pos
                sys.stderr.write('py_store: truncated torn tail of %s at %d\n' % (paths.jsonl, size))
                break
            entry = validate_entry(obj)
            call_id = entry['model_call_id']
            d = hashlib.sha256(line).hexdigest()
            known = index.get(call_id)
            if known is not None and known != d:
                state['incomplete'] = True
                state['version'] = state_version(state) + 1
                write_state(paths, state, 'durable')  # still the OLD index and offset
                raise ValueError('Model call id %r has conflicting durable payloads for rollout %r' % (call_id, paths.r))
            index[call_id] = d
            recovered += 1
        pos = end + 1
    state['entry_digests'] = index
    state['indexed_size'] = size
    if recovered > 0 and not legacy:
        state['version'] = state_version(state) + recovered
    return True


def append(directory, entry_obj):
    """docs/format.md#append. Returns (entry digest, duplicate?)."""
    entry = normalize_entry(entry_obj)
    b = canonical_bytes(entry)
    d = hashlib.sha256(b).hexdigest()
    paths = Paths(directory, entry['rollout_id'])
    with RolloutLock(paths, True):
        state = read_state(paths)
        if state.get('retired'):
            raise _retired_error(paths.r)
        if state.get('frozen'):
            raise _frozen_error(paths.r)
        changed = sync_index(paths, state)
        c = entry['model_call_id']
        known = state['entry_digests'].get(c)
        if known is not None:
            if known == d:
                if changed:
                    write_state(paths, state, 'durable')
                return d, True
            state['incomplete'] = True
            state['version'] = state_version(state) + 1
            write_state(paths, state, 'durable')
            raise ValueError('Model call id %r was reused with a different payload for rollout %r' % (c, paths.r))
        state['indexed_size'] = _append_bytes(paths.jsonl, b + b'\n')
        state['entry_digests'][c] = d
        state['version'] = state_version(state) + 1
        write_state(paths, state, 'nondurable')
        return d, False


def begin_call(directory, r, c):
    """docs/format.md#begin-call."""
    paths = Paths(directory, r)
    with RolloutLock(paths, True):
        state = read_state(paths)
        if state.get('retired'):
            raise _retired_error(r)
        if state.get('frozen'):
            raise _frozen_error(r)
        _append_bytes(paths.intents, c.encode('utf-8') + b'\n')


def mark_incomplete(directory, r, c):
    """docs/format.md#mark-incomplete (frozen deliberately not checked)."""
    paths = Paths(directory, r)
    with RolloutLock(paths, True):
        state = read_state(paths)
        if state.get('retired'):
            raise _retired_error(r)
        state['incomplete'] = True
        state['version'] = state_version(state) + 1
        write_state(paths, state, 'durable')
        _append_bytes(paths.incomplete, c.encode('utf-8') + b'\n')
        fsync_dir(directory)


def _read_entries_unlocked(paths):
    """docs/format.md#read-entries body: returns [(stripped line bytes, entry)]; any failure fails the read."""
    try:
        with open(paths.jsonl, 'rb') as f:
            data = f.read()
    except FileNotFoundError:
        return []
    out = []
    for raw in data.split(b'\n'):
        line = raw.strip()
        if not line:
            continue
        out.append((line, validate_entry(loads(line))))
    return out


def read_entries(directory, r):
    """docs/format.md#read-entries under LOCK_SH."""
    paths = Paths(directory, r)
    with RolloutLock(paths, False):
        return _read_entries_unlocked(paths)


def read_intents(paths):
    """docs/format.md#intents: split on LF/CR/CRLF, strip, drop empty pieces, strict UTF-8."""
    try:
        with open(paths.intents, 'rb') as f:
            data = f.read()
    except FileNotFoundError:
        return []
    out = []
    for piece in data.splitlines():  # bytes.splitlines splits on \n, \r, \r\n only
        piece = piece.strip()
        if piece:
            out.append(piece.decode('utf-8'))
    return out


def freeze(directory, r):
    """docs/format.md#freeze. Returns the snapshot dict (entries as (line, entry) pairs) and the final state."""
    paths = Paths(directory, r)
    with RolloutLock(paths, True):
        state = read_state(paths)
        if state.get('retired'):
            raise _retired_error(r)
        changed = sync_index(paths, state)
        if not state.get('frozen'):
            state['frozen'] = True
            state['snapshot_id'] = uuid.uuid4().hex
            state['version'] = state_version(state) + 1
            write_state(paths, state, 'durable')
        elif changed:
            write_state(paths, state, 'durable')
        entries = _read_entries_unlocked(paths)
        refusals = state.get('refusals') or []
        known = {e['model_call_id'] for _, e in entries}
        known.update(x.get('model_call_id') for x in refusals if isinstance(x, dict))
        dangling = [c for c in read_intents(paths) if c not in known]
        incomplete = bool(state.get('incomplete')) or bool(dangling)
        snapshot = {
            'rollout_id': r,
            'entries': entries,
            'incomplete': incomplete,
            'snapshot_id': str(state['snapshot_id']),
            'version': state_version(state),
            'dangling_intents': dangling,
        }
        return snapshot, state


# ---------------------------------------------------------------------------------------------
# writer mode: a live model-server-like writer for concurrency tests

_TEXTS = ['Sure, here is the answer.', 'Let me think about that…', 'Résumé: ok ✓', '結果は 42 です。',
          'tab\tand "quotes" \\ backslash', 'emoji 😀 and U+2028 \u2028 sep']


def _log_prob(rng):
    u = rng.random()
    if u < 0.05:
        return 0.0
    if u < 0.15:
        return -rng.uniform(1e-9, 5e-6)  # tiny values: scientific layout
    if u < 0.2:
        return -rng.choice([0.5, 0.25, 0.03125, 2.0, 1.0])
    return -rng.expovariate(2.0)


def _tokens(rng, lo, hi):
    return [rng.randrange(0, 151936) for _ in range(rng.randint(lo, hi))]


def run_writer(directory, rollouts, seconds, seed, log_path, delta_prob=0.35, root_prob=0.2, gen_ms=0.0,
               until=None, gate=None):
    """Writes until `seconds` pass or the file `until` exists. With `gate`, the second call
    "generates" until the file `gate` exists, having created `gate`.held once its intent is written."""
    rng = random.Random(seed)
    tag = 'w%d-%d' % (seed, os.getpid())
    chains = {}  # rollout -> (call id, cumulative tokens) of this writer's last entry
    counts = {'appended': 0, 'duplicates': 0, 'begin_calls': 0, 'refused_frozen_begin': 0,
              'refused_frozen_append': 0, 'refused_retired': 0, 'marked_incomplete': 0,
              'mark_failed': 0, 'errors': 0}
    per_rollout = {r: 0 for r in rollouts}
    first_error = None
    log = open(log_path, 'ab')
    deadline = time.time() + seconds
    n = 0
    try:
        while time.time() < deadline and not (until and os.path.exists(until)):
            r = rng.choice(rollouts)
            n += 1
            c = '%s-%d' % (tag, n)
            try:
                begin_call(directory, r, c)
                counts['begin_calls'] += 1
            except RuntimeError as e:
                if 'retired' in str(e):
                    counts['refused_retired'] += 1
                else:
                    counts['refused_frozen_begin'] += 1
                time.sleep(0.002)
                continue
            if gen_ms > 0:  # "generation" between the intent and the append
                time.sleep(rng.uniform(gen_ms / 2, gen_ms) / 1000.0)
            if gate and n == 2:
                open(gate + '.held', 'w').close()
                while not os.path.exists(gate):
                    time.sleep(0.005)
            parent = chains.get(r)
            gen = _tokens(rng, 1, 40)
            entry = {
                'rollout_id': r, 'model_call_id': c, 'model': 'test-model',
                'generation_token_ids': gen,
                'generation_log_probs': [_log_prob(rng) for _ in gen],
                'output_items': [{'type': 'message', 'role': 'assistant', 'id': 'msg_' + c,
                                  'content': [{'type': 'output_text', 'text': rng.choice(_TEXTS)}]}],
                'token_item_index': 0,
                'created_at': time.time(),
                'continuation_fingerprint': hashlib.sha256(c.encode()).hexdigest(),
                'continuation_context_len': rng.randint(1, 9),
                'continuation_context_digest': hashlib.sha256(b'ctx' + c.encode()).hexdigest(),
                'fingerprint_version': 1,
            }
            if parent is None or rng.random() < root_prob:
                prompt = _tokens(rng, 8, 120)
                entry.update(prompt_token_ids=prompt, parent_resolution='root')
                full_prompt = prompt
            else:
                pcall, pcum = parent
                suffix = _tokens(rng, 1, 30)
                full_prompt = pcum + suffix
                delta = rng.random() < delta_prob
                entry.update(parent_call_id=pcall, parent_resolution='resolved',
                             prompt_token_ids=suffix if delta else full_prompt,
                             prompt_is_delta=delta, prefix_requested=delta, prefix_supplied=delta)
            cum = full_prompt + gen
            entry.update(cum_len=len(cum), digest=compute_digest(cum))
            try:
                d, dup = append(directory, entry)
            except RuntimeError as e:
                if 'retired' in str(e):
                    counts['refused_retired'] += 1
                    continue
                counts['refused_frozen_append'] += 1
                # Older writers mark the rollout incomplete when a put is refused after freeze.
                try:
                    mark_incomplete(directory, r, c)
                    counts['marked_incomplete'] += 1
                except RuntimeError:
                    counts['mark_failed'] += 1
                continue
            except Exception as e:  # noqa: BLE001 - reported in the summary
                counts['errors'] += 1
                if first_error is None:
                    first_error = '%s: %s' % (type(e).__name__, e)
                continue
            chains[r] = (c, cum)
            counts['duplicates' if dup else 'appended'] += 1
            per_rollout[r] += 1
            log.write(canonical_bytes({'rollout': r, 'call': c, 'digest': d, 't': time.time()}) + b'\n')
            log.flush()
            os.fsync(log.fileno())
    finally:
        log.close()
    summary = dict(counts)
    summary.update(ok=True, writer=tag, per_rollout=per_rollout, first_error=first_error)
    return summary


# ---------------------------------------------------------------------------------------------
# command line

def _arg(s):
    """argv as UTF-8 text (independent of the locale); '-' reads stdin."""
    if s == '-':
        return sys.stdin.buffer.read().decode('utf-8')
    return os.fsencode(s).decode('utf-8')


def _emit(obj):
    sys.stdout.buffer.write(canonical_bytes(obj) + b'\n')
    sys.stdout.buffer.flush()


def _emit_raw(b):
    sys.stdout.buffer.write(b + b'\n')
    sys.stdout.buffer.flush()


def cmd_freeze(directory, r):
    snap, state = freeze(directory, r)
    entries = snap['entries']
    return {
        'ok': True,
        'rollout_id': snap['rollout_id'],
        'entries': len(entries),
        'entry_call_ids': [e['model_call_id'] for _, e in entries],
        'entry_line_digests': [hashlib.sha256(line).hexdigest() for line, _ in entries],
        'canonical_lines': [canonical_bytes(normalize_entry(e)) == line for line, e in entries],
        'incomplete': snap['incomplete'],
        'snapshot_id': snap['snapshot_id'],
        'version': snap['version'],
        'dangling_intents': snap['dangling_intents'],
        'state': state,
    }


def main(argv):
    global PLUS_EXPONENT
    if '--no-plus' in argv:
        PLUS_EXPONENT = False
        argv = [a for a in argv if a != '--no-plus']
    if not argv:
        sys.stderr.write(__doc__)
        return 2
    try:
        if argv[0] == 'canonical':
            _emit_raw(canonical_bytes(loads(_arg(argv[1]))))
            return 0
        if argv[0] == 'canonical_entry':
            _emit_raw(entry_canonical_bytes(loads(_arg(argv[1]))))
            return 0
        if argv[0] == 'digest':
            _emit({'ok': True, 'digest': compute_digest(loads(_arg(argv[1])))})
            return 0
        directory, cmd, rest = os.path.abspath(argv[0]), argv[1], [_arg(a) for a in argv[2:]]
        if cmd == 'append':
            d, dup = append(directory, loads(rest[0]))
            _emit({'ok': True, 'digest': d, 'duplicate': dup})
        elif cmd == 'begin_call':
            begin_call(directory, rest[0], rest[1])
            _emit({'ok': True})
        elif cmd == 'mark_incomplete':
            mark_incomplete(directory, rest[0], rest[1])
            _emit({'ok': True})
        elif cmd == 'freeze':
            _emit(cmd_freeze(directory, rest[0]))
        elif cmd == 'read':
            entries = read_entries(directory, rest[0])
            _emit({'ok': True, 'entries': [normalize_entry(e) for _, e in entries],
                   'entry_line_digests': [hashlib.sha256(line).hexdigest() for line, _ in entries]})
        elif cmd == 'state':
            _emit({'ok': True, 'state': read_state(Paths(directory, rest[0]))})
        elif cmd == 'hold':
            r, mode, secs = rest[0], rest[1], float(rest[2])
            with RolloutLock(Paths(directory, r), mode == 'ex'):
                sys.stdout.write('locked\n')
                sys.stdout.flush()
                time.sleep(secs)
        elif cmd == 'writer':
            opts = {'--rollouts': None, '--seconds': '2', '--seed': '0', '--log': None,
                    '--delta-prob': '0.35', '--root-prob': '0.2', '--gen-ms': '0', '--until': None,
                    '--gate': None}
            it = iter(rest)
            for a in it:
                if a not in opts:
                    raise ValueError('unknown writer option %s' % a)
                opts[a] = next(it)
            if not opts['--rollouts'] or not opts['--log']:
                raise ValueError('writer needs --rollouts and --log')
            rollouts = opts['--rollouts'].split(',')
            for r in rollouts:
                check_rollout_id(r)
            _emit(run_writer(directory, rollouts, float(opts['--seconds']), int(opts['--seed']),
                             opts['--log'], float(opts['--delta-prob']), float(opts['--root-prob']),
                             float(opts['--gen-ms']), opts['--until'], opts['--gate']))
        else:
            raise ValueError('unknown command %s' % cmd)
        return 0
    except Exception as e:  # noqa: BLE001 - the CLI reports every failure as JSON
        _emit({'ok': False, 'error': '%s: %s' % (type(e).__name__, e)})
        return 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
