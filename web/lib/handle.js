// One C++ object behind an embind handle that JS owns (a model, a KV cache): dispose() deletes
// it, a FinalizationRegistry deletes forgotten ones eventually, and methods take it through
// [HANDLE](), which throws a TypeError once the object is disposed. A method reads all its
// arguments before it takes the handle, so a getter that calls dispose() is caught as use after
// dispose, before anything reaches the heap.

/** The key of the method that returns a live object's handle (internal to web/lib). */
export const HANDLE = Symbol('handle');

/**
 * A new embind object of class Class, initialised by init(handle), which returns the core's
 * Status. On failure the object is deleted before fail(status), which must throw, so a refused
 * constructor leaks nothing.
 */
export function initialisedHandle(Class, init, fail) {
  const handle = new Class();
  const status = init(handle);
  if (status.kind) {
    handle.delete();
    fail(status); // throws
  }
  return handle;
}

const finalizer = new FinalizationRegistry((handle) => handle.delete());

export class Owned {
  #handle;
  #name;

  // handle: an initialised embind object; name: the class name errors use.
  constructor(handle, name) {
    this.#handle = handle;
    this.#name = name;
    finalizer.register(this, handle, this);
  }

  [HANDLE]() {
    if (!this.#handle) throw new TypeError(`${this.#name}: used after dispose()`);
    return this.#handle;
  }

  /** Frees the wasm memory; any later use throws a TypeError. Calling it again does nothing. */
  dispose() {
    if (!this.#handle) return;
    finalizer.unregister(this);
    this.#handle.delete();
    this.#handle = undefined;
  }
}
