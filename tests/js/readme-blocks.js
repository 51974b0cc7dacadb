// The ```js code blocks of a Markdown text, in order: what readme.test.js runs and what
// scripts/test-types.sh type-checks, read the same way by both.
export function jsBlocks(markdown) {
  return [...markdown.matchAll(/^```(?:js|javascript|mjs)[^\S\n]*\n([\s\S]*?)^```[^\S\n]*$/gm)].map((m) => m[1]);
}

// Whether a block uses the package: imports it, or calls the module object `attn` loaded earlier.
export function usesPackage(code) {
  return /\bfrom\s*['"]attention-wasm['"]/.test(code) || /\battn\./.test(code);
}
