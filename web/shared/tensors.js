// Small array helpers for building the package's inputs: a tensor from numbers, evenly and
// log-spaced grids.

/** A package tensor { data: Float32Array, shape }. */
export const tensor = (data, shape) => ({
  data: data instanceof Float32Array ? data : Float32Array.from(data),
  shape,
});

/** n evenly spaced numbers from a to b inclusive. */
export const linspace = (a, b, n) => Float32Array.from({ length: n }, (_, i) => a + ((b - a) * i) / (n - 1));

/** n log-spaced numbers from a to b inclusive. */
export const logspace = (a, b, n) =>
  Array.from({ length: n }, (_, i) => a * (b / a) ** (i / (n - 1)));
