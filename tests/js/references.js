// The rules of docs-references.test.js, as functions of text so that the test can try them on
// strings: where a file's comments are, which words of a comment cite a file of the repository,
// which backticked spans of the docs name code, and which names the code defines or uses.

import { basename, dirname, posix } from 'node:path';

// ---- Comments -------------------------------------------------------------------------------

const JS_LIKE = /\.(js|mjs|cjs|ts)$/;
const C_LIKE = /\.(c|cpp|hpp|h)$/;
const HASH_LIKE = /(\.(sh|py|cmake|in)|CMakeLists\.txt)$/;

// The comments of a source file and the file with its comments blanked out (same offsets, same
// lines), by a small lexer per language that skips string literals (and JS's template literals
// and regular expressions), so that a `//` in a URL or a `#` in a string is not a comment.
// Python's docstrings count as comments; HTML's are <!-- -->, plus its <script> and <style>.
export function splitComments(path, text) {
  let ranges;
  if (JS_LIKE.test(path)) ranges = scanC(text, { lineComments: true, js: true });
  else if (C_LIKE.test(path)) ranges = scanC(text, { lineComments: true, js: false });
  else if (path.endsWith('.css')) ranges = scanC(text, { lineComments: false, js: false });
  else if (path.endsWith('.py')) ranges = scanPython(text);
  else if (path.endsWith('.sh')) ranges = scanShell(text);
  else if (HASH_LIKE.test(path)) ranges = scanCMake(text);
  else if (path.endsWith('.html')) ranges = scanHtml(text);
  else return { comments: [], code: text };
  const lineStarts = [0];
  for (let i = 0; i < text.length; ++i) if (text[i] === '\n') lineStarts.push(i + 1);
  const lineOf = (offset) => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
  let code = '';
  let at = 0;
  for (const [start, end] of ranges) {
    code += text.slice(at, start) + text.slice(start, end).replace(/[^\n]/g, ' ');
    at = end;
  }
  code += text.slice(at);
  return { comments: ranges.map(([start, end]) => ({ line: lineOf(start), text: text.slice(start, end) })), code };
}

// Each scanner jumps from one character that may open a comment or a literal to the next (a
// global regex finds it), and over a literal with a sticky one: a comment is [start, end) of its
// text, after the // or # and before the */.
const QUOTED = { '"': /"(?:[^"\\\n]|\\[\s\S])*"?/y, "'": /'(?:[^'\\\n]|\\[\s\S])*'?/y };
const TEMPLATE_PART = /(?:[^`\\$]|\\[\s\S]|\$(?!\{))*(`|\$\{)?/y; // to after ` or ${
const REGEX_LITERAL = /\/(?:[^/\\[\n]|\\.|\[(?:[^\]\\\n]|\\.)*\])*\/?/y;
const REGEX_AFTER_WORD = new Set(['return', 'typeof', 'case', 'do', 'else', 'in', 'of', 'new', 'delete', 'void', 'throw',
  'yield', 'await']);

// Moves a sticky regex's match over text from i; returns the index after it, and the match.
function over(re, text, i) {
  re.lastIndex = i;
  const m = re.exec(text);
  return [re.lastIndex, m];
}

function lineEnd(text, i) {
  const end = text.indexOf('\n', i);
  return end < 0 ? text.length : end;
}

// Whether a / at i starts a JS regular expression rather than a division: what precedes it is
// an operator, an opening bracket, a keyword like return, or nothing.
function startsRegex(text, i) {
  let j = i - 1;
  while (j >= 0 && /\s/.test(text[j])) --j;
  if (j < 0) return true;
  if (!/[\w$]/.test(text[j])) return /[(,=:[!&|?{};+\-*%<>~^]/.test(text[j]);
  let k = j;
  while (k > 0 && /[\w$]/.test(text[k - 1])) --k;
  return REGEX_AFTER_WORD.has(text.slice(k, j + 1));
}

// C, C++, CSS and JS/TS.
function scanC(text, { lineComments, js }) {
  const ranges = [];
  const templates = []; // JS: the open ${ of template literals, each with its count of open {
  const next = js ? /[/"'`{}]/g : /[/"']/g;
  const template = (from) => {
    const [after, m] = over(TEMPLATE_PART, text, from);
    if (m[1] === '${') templates.push(0);
    return after;
  };
  let i = 0;
  for (let m; (next.lastIndex = i, m = next.exec(text));) {
    i = m.index;
    const c = text[i];
    if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      ranges.push([i + 2, end < 0 ? text.length : end]);
      i = end < 0 ? text.length : end + 2;
    } else if (c === '/' && text[i + 1] === '/' && lineComments) {
      ranges.push([i + 2, lineEnd(text, i)]);
      i = lineEnd(text, i);
    } else if (c === '/') {
      i = js && startsRegex(text, i) ? over(REGEX_LITERAL, text, i)[0] : i + 1;
    } else if (c === '"' || (c === "'" && (js || !/\w/.test(text[i - 1] ?? '')))) {
      i = over(QUOTED[c], text, i)[0];
    } else if (c === '`') {
      i = template(i + 1);
    } else if (c === '}' && templates.at(-1) === 0) {
      templates.pop();
      i = template(i + 1);
    } else {
      if (templates.length && (c === '{' || c === '}')) templates[templates.length - 1] += c === '{' ? 1 : -1;
      ++i;
    }
  }
  return ranges;
}

// Python: # comments and docstrings (a triple-quoted string that starts its line).
function scanPython(text) {
  const ranges = [];
  const next = /[#'"]/g;
  let i = 0;
  for (let m; (next.lastIndex = i, m = next.exec(text));) {
    i = m.index;
    const c = text[i];
    if (c === '#') {
      ranges.push([i + 1, lineEnd(text, i)]);
      i = lineEnd(text, i);
      continue;
    }
    const triple = text.startsWith(c.repeat(3), i);
    const quote = triple ? c.repeat(3) : c;
    let j = i + quote.length;
    while (j < text.length && !text.startsWith(quote, j) && (triple || text[j] !== '\n')) j += text[j] === '\\' ? 2 : 1;
    if (triple && /^\s*[rRuUbBfF]*$/.test(text.slice(text.lastIndexOf('\n', i - 1) + 1, i))) ranges.push([i + 3, j]);
    i = j + quote.length;
  }
  return ranges;
}

// Shell: # starting a word, outside quotes.
function scanShell(text) {
  const ranges = [];
  const next = /[#'"\\]/g;
  let i = 0;
  for (let m; (next.lastIndex = i, m = next.exec(text));) {
    i = m.index;
    const c = text[i];
    if (c === '#' && (i === 0 || /[\s;&|(]/.test(text[i - 1]))) {
      ranges.push([i + 1, lineEnd(text, i)]);
      i = lineEnd(text, i);
    } else if (c === "'") i = text.indexOf("'", i + 1) + 1 || text.length;
    else if (c === '"') i = over(/"(?:[^"\\]|\\[\s\S])*"?/y, text, i)[0];
    else i += c === '\\' ? 2 : 1;
  }
  return ranges;
}

// CMake: # and #[[ ]] comments, outside "strings" and [[bracket arguments]].
function scanCMake(text) {
  const ranges = [];
  const next = /[#"[]/g;
  let i = 0;
  for (let m; (next.lastIndex = i, m = next.exec(text));) {
    i = m.index;
    const [, bracket] = over(/#?\[(=*)\[/y, text, i);
    if (bracket) {
      const close = `]${bracket[1]}]`;
      const end = text.indexOf(close, i);
      if (text[i] === '#') ranges.push([i + bracket[0].length, end < 0 ? text.length : end]);
      i = end < 0 ? text.length : end + close.length;
    } else if (text[i] === '#') {
      ranges.push([i + 1, lineEnd(text, i)]);
      i = lineEnd(text, i);
    } else if (text[i] === '"') i = over(/"(?:[^"\\]|\\[\s\S])*"?/y, text, i)[0];
    else ++i;
  }
  return ranges;
}

// HTML: <!-- --> comments, and the comments of its <script> (JS) and <style> (CSS) elements.
function scanHtml(text) {
  const ranges = [];
  const parts = /<!--([\s\S]*?)-->|(<script\b[^>]*>)([\s\S]*?)<\/script>|(<style\b[^>]*>)([\s\S]*?)<\/style>/g;
  for (const m of text.matchAll(parts)) {
    if (m[1] !== undefined) {
      ranges.push([m.index + 4, m.index + 4 + m[1].length]);
      continue;
    }
    const script = m[2] !== undefined;
    const at = m.index + (m[2] ?? m[4]).length;
    for (const [start, end] of scanC(m[3] ?? m[5], { lineComments: script, js: script })) ranges.push([at + start, at + end]);
  }
  return ranges;
}

// ---- Paths cited in a text ------------------------------------------------------------------

// The paths a text (a comment, a Markdown file) cites: each word (a run without spaces, brackets, quotes, commas or
// semicolons; sentence punctuation after it stripped) that is
// - a path with a slash and an extension that files of the repository have (`kinds`: .cpp, .js,
//   .cmake, .md, …; not .h, .mjs or .wasm, which only other projects and builds have), whose first
//   directory is a top-level one of the repository (`cpp/src/kernels/gemm.hpp`), . or ..
//   (`../lib/heap.js`), or one whose directories are the tail of one of the repository's
//   (`kernels/gemm.hpp` from an include root, `bench/run.js`; but not transformers'
//   `models/gpt2/modeling_gpt2.py`, although the repository has a models/);
// - a path with a slash and no extension whose first directory is a top-level one: `cpp/relaxed`,
//   `web/lib/`;
// - a bare file name with a source-code extension (`SOURCE`) that files of the repository have,
//   starting lower-case (`thread_pool.cpp`, `index.js`; `Node.js` names a project), or a
//   Markdown file's in capitals, as a project's top-level documents are named (`README.md`);
// each optionally followed by `:line` or `:first-last`. Not citations: words with a scheme
// (https://), a glob or placeholder (* { } < > $ …, or a capitalised word in a usage line's path:
// `scripts/bench/training/MODEL_torch.py`), an extension alone (`.d.ts`).
const SOURCE = /\.(c|cpp|hpp|js|mjs|ts|py|sh|cmake|css|html)$/;

export function citedPaths(text, { kinds, topDirs, dirTails }) {
  const cited = [];
  for (const m of text.matchAll(/[^\s()[\]'"`,;]+/g)) {
    const word = m[0].replace(/#.*/, '').replace(/[.:!?]+$/, '');
    if (/:\/\/|[*{}<>$…|=\\@~]|[A-Z]{2,}[_-]|^\.\w/.test(word)) continue;
    const [, path, first, last] = word.match(/^(.*?)(?::(\d+)(?:-(\d+))?)?$/);
    if (!/^[\w.-]/.test(path)) continue;
    const extension = path.match(/\.([A-Za-z0-9]+)$/)?.[1];
    const hasKind = extension !== undefined && kinds.has(extension);
    const parts = path.split('/');
    let kind;
    if (parts.length > 1) {
      const ours = topDirs.has(parts[0]) || parts[0] === '.' || parts[0] === '..';
      if (hasKind && (ours || dirTails.has(parts.slice(0, -1).join('/')))) kind = 'file';
      else if (extension === undefined && topDirs.has(parts[0]) && !first) kind = 'directory';
    } else if (hasKind && ((SOURCE.test(path) && /^[a-z_]/.test(path)) || /^[A-Z]+\.md$/.test(path))) kind = 'file';
    if (kind) cited.push({ path, kind, first: first && Number(first), last: Number(last ?? first) || undefined });
  }
  return cited;
}

// ---- The repository's files -----------------------------------------------------------------

// Generated, not committed: the build tree, installed packages, the package's wasm/ (built from
// cpp/ by scripts/build-wasm.sh). dist/ is web/lib's files copied (scripts/build-wasm.sh) plus
// dist/wasm/, so a file cited under dist/ is looked for in web/lib/. A file X is generated where
// X.in is committed (attnConfig.cmake, by cmake/install.cmake).
const GENERATED = /^(\.\.?\/)*(build|node_modules|wasm|dist\/wasm|dist\/?$)(\/|$)/;
// Names of generated files that comments cite by way of example, each with where it comes from.
export const GENERATED_NAMES = new Map([
  ['docs-kv-cache-1.cpp', "scripts/test-readme-cpp.sh's name for the first ```cpp block of docs/kv-cache.md"],
]);

// The repository's files (paths relative to its root) and a function that counts a file's lines.
export class Tree {
  constructor(tracked, lineCount) {
    this.lineCount = lineCount;
    this.files = new Set(tracked);
    const parents = (f) => f.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/'));
    this.directories = new Set(tracked.flatMap(parents));
    this.byName = new Map();
    for (const f of tracked) this.byName.set(basename(f), [...(this.byName.get(basename(f)) ?? []), f]);
    const tails = (p) => p.split('/').map((_, i, parts) => parts.slice(i).join('/'));
    this.options = {
      kinds: new Set(tracked.map((f) => f.match(/\.([A-Za-z0-9]+)$/)?.[1]).filter(Boolean)),
      topDirs: new Set([...[...this.directories].filter((d) => !d.includes('/')), 'dist']), // dist/: web/lib's
      dirTails: new Set([...this.directories].flatMap(tails)),
    };
  }

  // The files (or directories) a citation from the file `from` ('' for the root) can mean: the
  // path relative to the citing file's directory or to the root, or the tail of a file's path.
  candidates(path, kind, from = '') {
    const set = kind === 'directory' ? this.directories : this.files;
    const cited = path.replace(/\/$/, '').replace(/^dist\//, 'web/lib/');
    const exact = [posix.join(dirname(from), cited), posix.normalize(cited)].filter((p) => set.has(p));
    if (exact.length) return exact;
    const tail = cited.replace(/^(\.\.?\/)+/, '');
    if (!tail.includes('/') && kind === 'file') {
      const named = this.byName.get(tail) ?? [];
      return named.sort((a, b) => (dirname(b) === dirname(from)) - (dirname(a) === dirname(from)));
    }
    return [...set].filter((p) => p === tail || p.endsWith(`/${tail}`));
  }

  // Why a citation from the file `from` is stale, or null: no such file, or fewer lines than it
  // cites.
  problem({ path, kind, first, last }, from = '') {
    const name = basename(path);
    if (GENERATED.test(path) || GENERATED_NAMES.has(name) || this.byName.has(`${name}.in`)) return null;
    const found = this.candidates(path, kind, from);
    if (!found.length) return `no such ${kind} in the repository`;
    if (!first) return null;
    const counts = found.map((f) => this.lineCount(f));
    if (counts.some((n) => first <= last && last <= n)) return null;
    return `${found[0]} has ${counts[0]} lines`;
  }
}

// ---- Names in the docs' backticks -------------------------------------------------------------

const NAME = '[A-Za-z_$][\\w$]*';
const FORMULA = /[+\-*/^⊙·×−≤≥<>|]|\w\s*\(/;

// What a backticked span of the docs says about code, or null when it is not a name of code:
// { names, qualified }. After `new ` and a call's parentheses are dropped (unless the arguments
// are a formula: an operator or a nested call, `softmax(logits / temperature)`), a span is a name
// when it is
// - qualified with :: (`attn::set_threads`, `attn::MultiHeadAttention::backward`) or with .
//   (`attn.threads`, `CausalLM.gpt2`, `mha.forward(x, x, x, { cache })`): qualified, and its
//   head decides whether it is ours (see the test); or
// - one name with the shape of code: camelCase (`kvHeads`), PascalCase of two or more words
//   (`MultiHeadAttention`, `KVCache`), snake_case (`softmax_pooling`), CONSTANT_CASE
//   (`BENCH_NODE`), or any name called (`dispose()`).
// Prose: single words (`seed`, `Transformer`), file names (`compute.js`: the path rule's),
// commands, options, values, shapes and formulas.
export function spanNames(span, kinds) {
  let s = span.trim().replace(/^new\s+/, '');
  const call = s.match(new RegExp(`^(${NAME}(?:(?:\\.|::)~?${NAME})*)\\((.*)\\)$`));
  if (call) {
    if (FORMULA.test(call[2])) return null;
    s = call[1];
  }
  for (const separator of ['::', '.']) {
    const parts = s.split(separator);
    if (parts.length > 1 && parts.every((p) => new RegExp(`^~?${NAME}$`).test(p))) {
      return separator === '.' && kinds.has(parts.at(-1)) ? null : { names: parts, qualified: separator };
    }
  }
  if (!new RegExp(`^${NAME}$`).test(s)) return null;
  const codeShaped = /^[a-z][a-z0-9]*[A-Z]/.test(s) || (/^[A-Z][A-Za-z0-9]*[a-z]/.test(s) && /[A-Z].*[A-Z]/.test(s))
    || /^[a-z][a-z0-9]*(_[a-z0-9]+)+_?$/.test(s) || /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$/.test(s);
  return codeShaped || call ? { names: [s], qualified: null } : null;
}

// Whether the text before a span gives it to another project: a possessive of a name (a word
// with a capital, a digit or a hyphen: "Hugging Face's `DynamicCache`", "d2l's", "GPT-2's"; not
// "the model's") right before it, or before the list it continues ("PyTorch's `add_bias_kv` or
// `add_zero_attn`").
export function attributed(before) {
  const list = before.match(/`[^`]+`(?:,\s+|,?\s+(?:or|and|nor)\s+)$/);
  if (list) return attributed(before.slice(0, list.index));
  return /(?:^|[\s(])[\w.-]*[A-Z0-9-][\w.-]*['’]s\s+$/.test(before);
}

// ---- Names the code defines or uses -----------------------------------------------------------

// The names a JS/TS or C++ file (its code, comments blanked) defines, by the positions definitions
// take, and the types among them (what a qualified name's head may be):
// JS/TS: function, class, interface, type, enum, const/let/var (destructuring too), a method or
//   property at the start of a line (`name(…) {`, `name: `, `name = `, `get name`, `static name`,
//   `readonly name?:`), a key after { or , (`{ threads: 1 }`), `x.name =`, `export { a as name }`;
//   types: class, interface, type, enum, namespace;
// C/C++: class, struct, union, enum, namespace (these are its types), using/typedef, #define, a
//   name after a type or a type's punctuation (`float window_left;`, `void set_threads(int n)`),
//   `Scope::name(`, and embind's JS names (`function("name", …)`, `.property("name", …)`).
const KEYWORDS = new Set(['return', 'new', 'else', 'case', 'throw', 'delete', 'typename', 'goto', 'co_return', 'sizeof',
  'if', 'while', 'for', 'switch', 'do', 'using', 'operator', 'template', 'public', 'private', 'protected', 'default']);

export function definitions(path, code) {
  const names = new Set();
  const types = new Set();
  const add = (re, into = names) => {
    for (const m of code.matchAll(re)) {
      into.add(m[1]);
      names.add(m[1]);
    }
  };
  const addList = (re, pick) => {
    for (const m of code.matchAll(re)) for (const part of m[1].split(',')) if (part.trim()) names.add(pick(part.trim()));
  };
  if (JS_LIKE.test(path)) {
    add(new RegExp(`\\b(?:class|interface|type|enum|namespace)\\s+(${NAME})`, 'g'), types);
    add(new RegExp(`\\b(?:function\\*?|const|let|var)\\s+(${NAME})`, 'g'));
    const modifiers = '(?:(?:export|declare|static|async|get|set|readonly|public|private|abstract)\\s+)*';
    add(new RegExp(`^\\s*${modifiers}\\*?#?(${NAME})\\s*\\??\\s*(?:\\(|:|=(?![=>]))`, 'gm'));
    add(new RegExp(`[{,]\\s*(${NAME})\\s*:`, 'g'));
    add(new RegExp(`\\.(${NAME})\\s*=(?![=>])`, 'g'));
    addList(/\bexport\s*\{([^}]*)\}/g, (part) => part.split(/\s+as\s+/).pop());
    addList(/\b(?:const|let|var)\s*\{([^}]*)\}\s*=/g, (part) => part.split(/\s*[:=]\s*/)[0]);
  } else if (C_LIKE.test(path)) {
    add(/\b(?:class|struct|union|enum(?:\s+class)?|namespace)\s+(?:\w+::)*(\w+)/g, types);
    add(/\busing\s+(\w+)\s*=/g);
    add(/\btypedef\b[^;]*?\b(\w+)\s*;/g);
    add(/#\s*define\s+(\w+)/g);
    for (const m of code.matchAll(/(\w+|[>*&\]])\s*[*&]*\s+(?:\w+::)*~?([A-Za-z_]\w*)\s*(?=[(=;{[,)]|$)/gm)) {
      if (!KEYWORDS.has(m[1]) && !KEYWORDS.has(m[2])) names.add(m[2]);
    }
    add(/\b\w+::~?([A-Za-z_]\w*)\s*\(/g);
    const embind = 'function|class_|value_object|value_array|field|property|constant|value|enum_|class_function';
    add(new RegExp(`\\b(?:${embind})\\b(?:<[^;"]*?>)?\\s*\\(\\s*"(${NAME})"`, 'g'));
  }
  return { names, types };
}

// The names a file's code (comments blanked) uses: every word, strings included.
export const usedNames = (code) => new Set(code.match(/[A-Za-z_$][\w$]*/g) ?? []);

// The variables that the ```js blocks of a Markdown text declare (`const mha = …`): the docs'
// own objects, whose members the prose cites (`mha.forward(…)`).
export function exampleVariables(markdown) {
  const names = new Set();
  for (const [, body] of markdown.matchAll(/^```(?:js|javascript|mjs)[^\n]*\n([\s\S]*?)^```/gm)) {
    for (const m of body.matchAll(new RegExp(`\\b(?:const|let|var)\\s+(${NAME})\\s*=`, 'g'))) names.add(m[1]);
  }
  return names;
}
