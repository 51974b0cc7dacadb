// Moves data between JS and the wasm heap for one call. Every buffer a scope allocates is freed
// when the scope ends, whatever happens in between, so a failed call leaks nothing.

export class HeapScope {
  #module;
  #pointers = [];

  constructor(module) {
    this.#module = module;
  }

  // Allocates `count` values of `ArrayType` and returns the address (0 for an empty buffer).
  alloc(count, ArrayType = Float32Array) {
    const bytes = count * ArrayType.BYTES_PER_ELEMENT;
    if (bytes === 0) return 0;
    const pointer = this.#module._malloc(bytes) >>> 0;
    if (pointer === 0) {
      throw new RangeError(`out of memory: could not allocate ${bytes} bytes in the wasm heap`);
    }
    this.#pointers.push(pointer);
    return pointer;
  }

  // Copies a typed array in; returns its address (0 for null or empty).
  put(array) {
    if (!array || array.length === 0) return 0;
    const pointer = this.alloc(array.length, array.constructor);
    // The heap views are re-created when memory grows, so they are read after the allocation.
    heapFor(this.#module, array.constructor).set(array, pointer / array.BYTES_PER_ELEMENT);
    return pointer;
  }

  // Copies `count` values at `pointer` out into a fresh JS-owned array.
  take(pointer, count, ArrayType = Float32Array) {
    if (count === 0) return new ArrayType(0);
    const start = pointer / ArrayType.BYTES_PER_ELEMENT;
    return heapFor(this.#module, ArrayType).slice(start, start + count);
  }

  free() {
    for (const pointer of this.#pointers) this.#module._free(pointer);
    this.#pointers = [];
  }
}

function heapFor(module, ArrayType) {
  switch (ArrayType) {
    case Float32Array:
      return module.HEAPF32;
    case Int32Array:
      return module.HEAP32;
    case Uint8Array:
      return module.HEAPU8;
    default:
      throw new TypeError(`internal: no heap view for ${ArrayType.name}`);
  }
}

// Runs `body(scope)` and frees the scope's buffers afterwards. A non-empty string returned by
// the wasm side is the core's error message (its checks mirror ours, so it means a check here
// was missed); it becomes a RangeError rather than a silent wrong answer.
export function withHeap(module, body) {
  const scope = new HeapScope(module);
  try {
    return body(scope);
  } finally {
    scope.free();
  }
}

export function check(errorMessage) {
  if (errorMessage) throw new RangeError(errorMessage);
}
