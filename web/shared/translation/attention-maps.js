// Attention weights as the page shows them, from the package's [B, heads, Tq, Tk] tensors: the
// mean over a layer's heads (one heatmap for a multi-head layer), and one sentence's matrices
// cut to its real tokens (the padded rows and columns of the batch dropped).

/** [B, heads, T, S] -> [B, T, S], the mean over the heads. */
export function meanOverHeads({ data, shape: [B, heads, T, S] }) {
  const out = new Float32Array(B * T * S);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < heads; h++) {
      const from = (b * heads + h) * T * S;
      for (let x = 0; x < T * S; x++) out[b * T * S + x] += data[from + x] / heads;
    }
  }
  return { data: out, shape: [B, T, S] };
}

/**
 * Matrix `m` of a batch of [T, S] matrices laid out back to back (`data`, T rows of S), cut to
 * its first `rows` rows and `cols` columns: a Float32Array of rows × cols.
 */
export function cutMatrix(data, m, [T, S], rows, cols) {
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) out.set(data.subarray((m * T + r) * S, (m * T + r) * S + cols), r * cols);
  return out;
}

/** Sentence `b`'s matrix of every head of a [B, heads, T, S] tensor, each cut to rows × cols. */
export const headMatrices = ({ data, shape: [, heads, T, S] }, b, rows, cols) =>
  Array.from({ length: heads }, (_, h) => cutMatrix(data, b * heads + h, [T, S], rows, cols));
