// What a result tensor is made of, and `describe` for modules that word their own errors
// (safetensors.js); argument reading and checking live in arguments.js.

export { describe } from './arguments.js';

/** A [batch, rows, cols] TensorArg for the wasm side: a heap address and a shape. */
export function tensorArg(pointer, shape) {
  const [batch, rows, cols] = shape.length === 3 ? shape : shape.length === 2 ? [1, ...shape] : [1, shape[0] ?? 0, 1];
  return { data: pointer, batch, rows, cols };
}

/** The TensorArg of something not given: address 0, shape [1, 0, 0]. */
export const NO_TENSOR = Object.freeze({ data: 0, batch: 1, rows: 0, cols: 0 });
