// What the README, docs/*.md and the code's comments cite exists, so that a rename or a move fails
// here rather than on a reader. The rules live in references.js, as functions of text that the
// last tests below try on literal strings.
//
// Paths, in README.md and docs/*.md (code blocks included) and in the comments of the source
// files under cpp/, cmake/, harness/, scripts/, web/ and tests/ and of CMakeLists.txt (C, C++,
// JS, TS, CSS, HTML, Python with its docstrings, shell, CMake; a lexer per language skips string
// literals):
// a word with a slash and an extension that files of the repository have
// (`cpp/src/kernels/gemm.hpp`, `kernels/gemm.hpp` from an include root, `../lib/heap.js`), a
// directory under a top-level one (`web/lib`, `cpp/relaxed/`), a bare lower-case file name with a
// source-code extension (`thread_pool.cpp`) or a Markdown name in capitals (`README.md`), each
// with an optional `:line` or `:first-last`, must name a file of the repository (relative to the
// citing file, to the root, or as the tail of the file's path) that has those lines. Other
// projects' paths are not ours by the same rule: an extension the repository lacks (emscripten's
// `bind.h`), or directories it lacks (transformers' `models/gpt2/modeling_gpt2.py`). Generated
// files are not checked: build/, node_modules/, dist/wasm/ and wasm/ (the rest of dist/ is
// web/lib's files, copied by scripts/build-wasm.sh, and looked for there), a file whose name plus
// .in is committed, and the one name in references.js's GENERATED_NAMES, with its reason. The
// repository's files are git's: committed, or new and not ignored.
//
// Names, in the docs' backticks (outside code blocks): a span shaped like code (camelCase,
// PascalCase of two words or more, snake_case, CONSTANT_CASE, a call, or a qualified name; see
// spanNames) is checked one of two ways.
// - Qualified through something of ours, by definition (references.js's definitions: a function,
//   class, member, const/let, method, property, embind name… in a defining position):
//   `attn::set_threads`, `attn::MultiHeadAttention::backward` must be defined in the public
//   headers (cpp/include; `attn::detail::` and other heads of ours, `CausalLMConfig::gpt2()`, in
//   cpp/), the head being a C++ namespace, class or struct of ours; `CausalLM.gpt2`,
//   `KVCache.attend` (a class or interface of web/lib/index.d.ts), `attn.threads`,
//   `mha.forward(…)` (a variable that the docs' ```js examples declare; two parts only, as
//   `model.norm.weight` is a state-dict key) must be declared in web/lib/index.d.ts, the
//   package's types. Under others' heads (`std::thread`, `torch.optim.Adam`,
//   `WebAssembly.validate`) names are theirs.
// - A bare name, by use: it must appear in the code (comments blanked; strings count) or in the
//   docs' own ```js and ```cpp examples, which the tests run. Not by definition, because the docs
//   also cite, bare, names that others define and our code only uses (`RangeError`,
//   `find_package`, `thread_local`, `LlamaForCausalLM`, `worker_threads`). A bare name that a
//   possessive gives to another project right before it, or before the list it ends
//   ("Hugging Face's `DynamicCache`", "PyTorch's `add_bias_kv` or `add_zero_attn`"), is theirs.
// Prose in backticks — single words (`seed`, `Transformer`), commands, options, values, shapes,
// formulas (`softmax(logits / temperature)`), file names — is not a name.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { documentationFiles } from './readme-blocks.js';
import {
  Tree, attributed, citedPaths, definitions, exampleVariables, spanNames, splitComments, usedNames,
} from './references.js';

const repo = process.env.ATTN_REPO;
assert.ok(repo, 'ATTN_REPO (the repository root) is not set');
const read = (file) => readFileSync(join(repo, file), 'utf8');
const tracked = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: repo, encoding: 'utf8' })
  .trim()
  .split('\n')
  .filter((file) => existsSync(join(repo, file)));
const lineCounts = new Map();
const lineCount = (file) => {
  if (!lineCounts.has(file)) lineCounts.set(file, read(file).split('\n').length);
  return lineCounts.get(file);
};
const tree = new Tree(tracked, lineCount);

// The code: the files under these folders, but for data (JSON, weights, the fuzz corpus's inputs).
const CODE = /^(cpp|cmake|harness|scripts|web|tests)\/|^CMakeLists\.txt$/;
const codeFiles = tracked.filter((f) => CODE.test(f) && !/\.(json|safetensors)$|\/corpus\//.test(f));
const split = new Map(codeFiles.map((f) => [f, splitComments(f, read(f))]));

const docs = documentationFiles(repo).map((file) => [file, read(file)]);
// Code blocks blanked out, lines kept.
const withoutCode = (markdown) => markdown.replace(/^```[\s\S]*?^```/gm, (block) => block.replace(/[^\n]/g, ' '));
const EXAMPLE = /^```(?:js|javascript|mjs|cpp)[^\n]*\n([\s\S]*?)^```/gm;
const examples = docs.flatMap(([, text]) => [...text.matchAll(EXAMPLE)].map((m) => m[1]));

// This test and its rules quote names to try the rules on: not code that defines or uses them.
const CHECKER = new Set(['tests/js/docs-references.test.js', 'tests/js/references.js']);
const used = new Set(examples.flatMap((code) => [...usedNames(code)]));
for (const [file, { code }] of split) if (!CHECKER.has(file)) for (const name of usedNames(code)) used.add(name);
// What files matching `pattern` define: { names, types }.
function defined(pattern) {
  const all = { names: new Set(), types: new Set() };
  for (const [file, { code }] of [...split].filter(([f]) => pattern.test(f))) {
    const found = definitions(file, code);
    for (const key of ['names', 'types']) for (const name of found[key]) all[key].add(name);
  }
  return all;
}
const api = defined(/^web\/lib\/index\.d\.ts$/); // the package's declarations
const headers = defined(/^cpp\/include\//); // the C++ library's public headers
const cpp = defined(/^cpp\//); // all of the C++
const variables = new Set(docs.flatMap(([, text]) => [...exampleVariables(text)]));

// The stale paths in a text (a comment's, or a whole Markdown file's), as messages; `line` is
// the text's first line in `file`.
function pathProblems(file, text, line = 1) {
  const problems = [];
  text.split('\n').forEach((content, i) => {
    for (const cited of citedPaths(content, tree.options)) {
      const problem = tree.problem(cited, file);
      const lines = cited.first ? `:${cited.first}${cited.last !== cited.first ? `-${cited.last}` : ''}` : '';
      if (problem) problems.push(`${file}:${line + i} cites ${cited.path}${lines}: ${problem}`);
    }
  });
  return problems;
}

// Where a qualified name's parts must be defined, with the words that say so, or null when its
// head is not ours.
function scopeOf({ names: [head, ...rest], qualified }) {
  if (qualified === '::' && cpp.types.has(head)) {
    return head === 'attn' && rest[0] !== 'detail' ? [headers, 'defined in cpp/include'] : [cpp, 'defined in cpp/'];
  }
  const ours = api.types.has(head) || (variables.has(head) && rest.length === 1);
  return qualified === '.' && ours ? [api, 'declared in web/lib/index.d.ts'] : null;
}

// The names a Markdown text cites in backticks that the code does not have, as messages.
function nameProblems(file, markdown) {
  const problems = [];
  const prose = withoutCode(markdown);
  for (const m of prose.matchAll(/`([^`]+)`/g)) {
    const span = m[1].replace(/\s+/g, ' ');
    const found = spanNames(span, tree.options.kinds);
    const before = prose.slice(0, m.index);
    const report = (message) => problems.push(`${file}:${before.split('\n').length} cites \`${span}\`: ${message}`);
    if (found?.qualified) {
      const scope = scopeOf(found);
      const missing = scope ? found.names.slice(1).filter((n) => !scope[0].names.has(n.replace(/^~/, ''))) : [];
      if (missing.length) report(`${missing.join(', ')} is not ${scope[1]}`);
    } else if (found && !attributed(before) && !used.has(found.names[0])) {
      report(`${found.names[0]} appears nowhere in the code`);
    }
  }
  return problems;
}

for (const [file, text] of docs) {
  test(`${file}: the files, lines and names it cites exist`, () => {
    const problems = [...pathProblems(file, text), ...nameProblems(file, text)];
    assert.deepEqual(problems, []);
  });
}

for (const folder of ['cpp', 'cmake', 'harness', 'scripts', 'web', 'tests', 'CMakeLists.txt']) {
  test(`the comments under ${folder}: the files and lines they cite exist`, () => {
    const problems = [...split]
      .filter(([file]) => file === folder || file.startsWith(`${folder}/`))
      .flatMap(([file, { comments }]) => comments.flatMap((c) => pathProblems(file, c.text, c.line)));
    assert.deepEqual(problems, []);
  });
}

// ---- The rules on literal strings -----------------------------------------------------------

test('comments are found by each language, and strings that look like comments are not', () => {
  const texts = (path, text) => splitComments(path, text).comments.map((c) => `${c.line}:${c.text.trim()}`);
  const js = "const u = 'http://x'; // one\nconst r = /\\/\\//; /* two */ const t = `//${a /* three */}`;";
  assert.deepEqual(texts('a.js', js), ['1:one', '2:two', '2:three']);
  assert.deepEqual(texts('a.cpp', 'int x = 1;  // see b.hpp\nconst char* s = "/* no */";'), ['1:see b.hpp']);
  assert.deepEqual(texts('a.sh', 'echo "$#" \'#no\' # yes\nx=${#y}'), ['1:yes']);
  assert.deepEqual(texts('a.py', '"""Doc."""\nx = "#no"  # yes\ny = """not a docstring"""'), ['1:Doc.', '2:yes']);
  assert.deepEqual(texts('CMakeLists.txt', 'set(x "#no") # yes\n#[[ block ]]'), ['1:yes', '2:block']);
  const html = '<!-- top --><p>//no</p><script>// js\n</script><style>/* css */</style>';
  assert.deepEqual(texts('a.html', html), ['1:top', '1:js', '2:css']);
});

test('a stale path, file name or line in a comment is reported, and other projects\' paths are not', () => {
  const files = ['cpp/src/kernels/gemm.hpp', 'cpp/src/parallel/thread_pool.cpp', 'cmake/attnConfig.cmake.in',
    'cmake/install.cmake', 'web/lib/heap.js'];
  const fake = new Tree(files, () => 10);
  const problems = (comment, from = 'cpp/src/kernels/gemm.hpp') => citedPaths(comment, fake.options)
    .map((cited) => [cited.path, fake.problem(cited, from)]);
  assert.deepEqual(problems('cpp/src/kernels/gemm.hpp:3-10, kernels/gemm.hpp:11. thread_pool.cpp: cpp/src/old.hpp.'), [
    ['cpp/src/kernels/gemm.hpp', null],
    ['kernels/gemm.hpp', 'cpp/src/kernels/gemm.hpp has 10 lines'],
    ['thread_pool.cpp', null],
    ['cpp/src/old.hpp', 'no such file in the repository'],
  ]);
  assert.deepEqual(problems('../parallel/thread_pool.cpp, dist/heap.js, cpp/gone/, scripts/MODEL_x.py'), [
    ['../parallel/thread_pool.cpp', null], ['dist/heap.js', null], ['cpp/gone/', 'no such directory in the repository'],
  ]);
  const others = 'emscripten/bind.h, https://a.org/cpp/x.cpp, models/gpt2/x.hpp, Node.js, .d.ts, *.cpp, attnConfig.cmake';
  assert.deepEqual(problems(others), [['attnConfig.cmake', null]]);
});

test('a backticked name that the code lacks is reported, and prose in backticks is not a name', () => {
  const names = (span) => spanNames(span, tree.options.kinds);
  assert.deepEqual(names('attn::MultiHeadAttention::backward'), { names: ['attn', 'MultiHeadAttention', 'backward'], qualified: '::' });
  assert.deepEqual(names('new attn.CausalLM(config)'), { names: ['attn', 'CausalLM'], qualified: '.' });
  assert.deepEqual(names('useKernelTable'), { names: ['useKernelTable'], qualified: null });
  for (const prose of ['seed', 'npm test', 'softmax(logits / temperature)', 'compute.js', '[B, n, d]', '-O3', "'f32'", 'threads: 1']) {
    assert.equal(names(prose), null, prose);
  }
  assert.ok(attributed("the cache is Hugging Face's "));
  assert.ok(attributed("PyTorch's `add_bias_kv`, `kdim` or "));
  assert.ok(!attributed("Hugging Face's names: "));
  assert.ok(!attributed("the model's "));
  // The stale paragraph of issue 33, and names that moved: each reported against this repository.
  const stale = 'hands their indices to `useKernelTable`; `attn.noSuchThing`, `attn::no_such_thing()`.';
  assert.deepEqual(nameProblems('x.md', stale), [
    'x.md:1 cites `useKernelTable`: useKernelTable appears nowhere in the code',
    'x.md:1 cites `attn.noSuchThing`: noSuchThing is not declared in web/lib/index.d.ts',
    'x.md:1 cites `attn::no_such_thing()`: no_such_thing is not defined in cpp/include',
  ]);
  assert.deepEqual(nameProblems('x.md', '`CausalLM.gone(sizes)`, `mha.gone()`, `attn::MultiHeadAttention::gone`'), [
    'x.md:1 cites `CausalLM.gone(sizes)`: gone is not declared in web/lib/index.d.ts',
    'x.md:1 cites `mha.gone()`: gone is not declared in web/lib/index.d.ts',
    'x.md:1 cites `attn::MultiHeadAttention::gone`: gone is not defined in cpp/include',
  ]);
  assert.deepEqual(nameProblems('x.md', "`use_kernel_table`, `attn.threads`, `CausalLMConfig::gpt2()`, `std::gone`, "
    + "`torch.gone`, `model.gone.weight`, Hugging Face's `DynamicCache`, `npm test`, `seed`"), []);
  const table = 'cpp/src/kernels/kernel_table.hpp';
  assert.deepEqual(pathProblems('x.md', `see \`${table}:100000\` and DESIGN.md and cpp/relaxed/gone.cpp`), [
    `x.md:1 cites ${table}:100000: ${table} has ${lineCount(table)} lines`,
    'x.md:1 cites DESIGN.md: no such file in the repository',
    'x.md:1 cites cpp/relaxed/gone.cpp: no such file in the repository',
  ]);
});
