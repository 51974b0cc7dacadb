// Runs one core call: checks that its buffers fit in the wasm heap before allocating any, copies
// the argument records in, allocates the outputs, maps the core's status to a JS error, copies
// the results out into fresh JS-owned arrays, and frees every buffer whatever happens.

import { shapeString, typedArrayLength } from './arguments.js';

// The module is linked with -sMAXIMUM_MEMORY=4GB, the whole 32-bit address space; of that, the
// buffers of one call get what the module's static data, stack and the core's scratch leave.
const HEAP_LIMIT_BYTES = 2 ** 32 - 64 * 2 ** 20;
const HEAP_LIMIT = '4032 MiB (4 GiB less 64 MiB kept for the module\'s own data, stack and scratch)';
const BYTES = { Float32Array: 4, Int32Array: 4, Uint8Array: 1 };
const HEAP_VIEWS = { Float32Array: 'HEAPF32', Int32Array: 'HEAP32', Uint8Array: 'HEAPU8' };
const ARRAY_TYPES = { Float32Array, Int32Array, Uint8Array };

const gib = (bytes) => `${(bytes / 2 ** 30).toFixed(1)} GiB`;

// The module's heap as a typed array. The glue re-creates its views when memory grows on this
// thread; in the threaded build a pool worker may grow the shared memory (its stack and TLS as
// it starts), which leaves them short until glue code next runs here, so they are checked
// against the memory's current buffer (module.wasmMemory, which only the threaded glue exports).
const refreshed = new WeakMap();
export function heapView(module, type = 'Uint8Array') {
  const view = module[HEAP_VIEWS[type]];
  const buffer = module.wasmMemory?.buffer;
  if (!buffer || view.buffer === buffer) return view;
  let views = refreshed.get(module);
  if (views?.buffer !== buffer) {
    views = { buffer };
    refreshed.set(module, views);
  }
  views[type] ??= new ARRAY_TYPES[type](buffer);
  return views[type];
}

// From this many bytes, a copy out of the heap goes into memory that is not zeroed first where the
// engine offers it (Node's Buffer.allocUnsafeSlow: its own ArrayBuffer of exactly that length,
// every byte of which the copy overwrites). A zeroed array (slice()) writes its pages twice: 1.3-1.45x
// slower from 64 KiB to 8 MiB on the development VM; below 64 KiB the call costs more than it saves.
const UNZEROED_FROM_BYTES = 64 * 1024;
const allocUnzeroed = typeof Buffer === 'function' && typeof Buffer.allocUnsafeSlow === 'function'
  ? (bytes) => {
    const { buffer, byteOffset } = Buffer.allocUnsafeSlow(bytes);
    return byteOffset === 0 && buffer.byteLength === bytes ? buffer : null;
  }
  : () => null;

/** A fresh JS-owned copy of `view` (a typed array), of the same type. */
export function freshCopy(view) {
  const buffer = view.byteLength >= UNZEROED_FROM_BYTES ? allocUnzeroed(view.byteLength) : null;
  if (!buffer) return view.slice();
  const copy = new view.constructor(buffer);
  copy.set(view);
  return copy;
}

/** An output buffer the call will allocate: { name, shape, type, count }. */
export function output(name, shape, type = 'Float32Array') {
  return { name, shape, type, count: shape.reduce((a, b) => a * b, 1) };
}

// The sum of every buffer the call puts in the heap must fit, or the call fails before the
// first allocation; the message names the largest buffer, which is the one to shrink.
function checkHeapLimit(buffers) {
  let total = 0;
  let largest;
  for (const buffer of buffers) {
    const bytes = buffer.count * BYTES[buffer.type];
    total += bytes;
    if (!largest || bytes > largest.bytes) largest = { ...buffer, bytes };
  }
  if (total >= HEAP_LIMIT_BYTES) {
    const others = total - largest.bytes;
    throw new RangeError(
      `${largest.name}: shape ${shapeString(largest.shape)} needs ${gib(largest.bytes)}` +
        `${others > 0 ? ` (and the call's other buffers ${gib(others)})` : ''}, more than the wasm heap's limit of ${HEAP_LIMIT}`,
    );
  }
}

class HeapScope {
  #module;
  #pointers = [];

  constructor(module) {
    this.#module = module;
  }

  #alloc(bytes) {
    if (bytes === 0) return 0;
    const pointer = this.#module._malloc(bytes) >>> 0;
    if (pointer === 0) {
      throw new RangeError(`out of memory: could not allocate ${bytes} bytes in the wasm heap (limit 4 GiB, grown to ${gib(heapView(this.#module).length)})`);
    }
    this.#pointers.push(pointer);
    return pointer;
  }

  /** Allocates an output buffer (see output()); returns its address, 0 when empty. */
  alloc(buffer) {
    return this.#alloc(buffer.count * BYTES[buffer.type]);
  }

  /** Copies an argument record in; returns its address (0 when empty). */
  put(record) {
    const pointer = this.#alloc(record.count * BYTES[record.type]);
    if (pointer) this.write(record, pointer);
    return pointer;
  }

  /** Copies an argument record to `pointer` (in a buffer this scope allocated). */
  write(record, pointer) {
    // The record's view is our own, but the caller's buffer under it may have been detached or
    // shrunk by a getter that ran while later arguments were read.
    if (typedArrayLength(record.data) !== record.count) {
      throw new TypeError(`${record.name}: its buffer was detached or resized while the other arguments were read`);
    }
    // The heap views are re-created when memory grows, so they are read after the allocation.
    heapView(this.#module, record.type).set(record.data, pointer / BYTES[record.type]);
  }

  /** Copies an output buffer out into a fresh JS-owned tensor { data, shape }. */
  take(pointer, buffer) {
    const ArrayType = ARRAY_TYPES[buffer.type];
    if (buffer.count === 0) return { data: new ArrayType(0), shape: [...buffer.shape] };
    const start = pointer / BYTES[buffer.type];
    return { data: freshCopy(heapView(this.#module, buffer.type).subarray(start, start + buffer.count)), shape: [...buffer.shape] };
  }

  free() {
    for (const pointer of this.#pointers) this.#module._free(pointer);
    this.#pointers = [];
  }
}

/**
 * Runs `body(scope)` for one core call. `buffers` lists every argument record and output()
 * the call will put in the heap; their total is checked against the heap limit first.
 */
export function withHeap(module, buffers, body) {
  checkHeapLimit(buffers);
  const scope = new HeapScope(module);
  try {
    return body(scope);
  } finally {
    scope.free();
  }
}

// The core's exceptions by kind (see cpp/bindings/embind.cpp): argument errors and failed
// allocations are RangeErrors; anything else is a bug, reported as such.
const ERRORS = { range: RangeError, memory: RangeError };

/**
 * Throws the JS error for a core status { kind, message } ('' kind: success). `names` maps the
 * core's argument names to the JS API's where they differ (src_valid_lens -> srcValidLens): a
 * core message starts with the argument's name.
 */
export function check(status, names = {}) {
  if (!status.kind) return;
  const ErrorType = ERRORS[status.kind];
  if (ErrorType) {
    const argument = status.message.slice(0, status.message.indexOf(':'));
    const message = Object.hasOwn(names, argument) ? names[argument] + status.message.slice(argument.length) : status.message;
    throw new ErrorType(status.kind === 'memory' ? `out of memory: ${message}` : message);
  }
  throw new Error(`attention-wasm internal error (${status.kind}): ${status.message}`);
}
