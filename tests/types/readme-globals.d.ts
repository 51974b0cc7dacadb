// What the fragments among the README's and docs' examples take from the text around them:
// `attn` loaded as in the README's first example, an input `x` and a padding mask. An example
// that uses another name it does not define fails the type test until it is declared here.
import type { Attention, Tensor } from 'attention-wasm';

declare global {
  const attn: Attention;
  const x: Tensor;
  const keyPaddingMask: Uint8Array;
}
