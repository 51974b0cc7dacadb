// Hostile arguments for the API fuzzer: wrappers a caller may legitimately pass (the result must
// be the one the plain argument gives) and look-alikes the package must refuse with a TypeError or
// RangeError naming the argument. Each works on a typed array or a tensor { data, shape } of the
// fuzzer's own making.

import vm from 'node:vm';

/** Detaches an ArrayBuffer (the way postMessage with a transfer list does). */
export const detach = (buffer) => structuredClone(buffer, { transfer: [buffer] });

const realm = vm.createContext({});
const typeName = (array) => Object.prototype.toString.call(array).slice(8, -1);

// A typed array holding the same values, in a form the contract accepts.
const ARRAY_FORMS = {
  subclass: (array) => {
    const Subclass = class extends array.constructor {
      get length() { return 1e9; } // an own accessor must not change what is read
    };
    return new Subclass(array);
  },
  otherRealm: (array) => {
    const copy = vm.runInContext(`new ${typeName(array)}(${array.length})`, realm);
    copy.set(array);
    return copy;
  },
  offsetView: (array) => {
    const larger = new array.constructor(array.length + 5);
    larger.set(array, 3);
    return larger.subarray(3, 3 + array.length);
  },
  nodeBuffer: (array) => (array instanceof Uint8Array ? Buffer.from(array) : array),
};

/** Answers `first` on the first read and `later` on every read after it. */
function changing(first, later) {
  let reads = 0;
  return () => (reads++ === 0 ? first : later);
}

// A tensor holding the same values, in a form the contract accepts: every part is read once, so
// what a getter or Proxy answers on a second read must not matter.
const TENSOR_FORMS = {
  proxy: (t) => new Proxy({ data: t.data, shape: [...t.shape] }, {}),
  gettersThatChange: (t) => {
    const data = changing(t.data, new t.data.constructor(1));
    const shape = changing([...t.shape], [1]);
    return { get data() { return data(); }, get shape() { return shape(); } };
  },
  shapeElementsThatChange: (t) => {
    const shape = [];
    t.shape.forEach((size, axis) => {
      const read = changing(size, size + 4096);
      Object.defineProperty(shape, axis, { enumerable: true, get: read });
    });
    return { data: t.data, shape };
  },
  proxyShapeThatChanges: (t) => {
    const reads = new Set();
    const shape = new Proxy([...t.shape], {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) {
          if (reads.has(key)) return 2 ** 20;
          reads.add(key);
        }
        return Reflect.get(target, key, receiver);
      },
    });
    return { data: t.data, shape };
  },
};

const isTypedArray = (value) => ArrayBuffer.isView(value) && !(value instanceof DataView);

/** A valid hostile form of `value` (a typed array or a tensor): { form, value }. */
export function validForm(rng, value) {
  const pickFrom = (forms) => {
    const names = Object.keys(forms);
    return names[Math.floor(rng() * names.length)];
  };
  if (isTypedArray(value)) {
    const form = pickFrom(ARRAY_FORMS);
    return { form, value: ARRAY_FORMS[form](value) };
  }
  if (rng() < 0.5) {
    const form = pickFrom(ARRAY_FORMS);
    return { form: `data as ${form}`, value: { data: ARRAY_FORMS[form](value.data), shape: [...value.shape] } };
  }
  const form = pickFrom(TENSOR_FORMS);
  return { form, value: TENSOR_FORMS[form](value) };
}

/** A copy of `array` whose buffer is detached. */
function detachedCopy(array) {
  const copy = array.slice();
  detach(copy.buffer);
  return copy;
}

// A typed array the contract refuses, posing as `array`: each a TypeError.
const OTHER_TYPE = { Float32Array: Float64Array, Int32Array: Float32Array, Uint8Array: Int8Array };
const ARRAY_IMPOSTORS = {
  proxy: (array) => new Proxy(array, {}),
  inheritsPrototype: (array) => Object.create(Object.getPrototypeOf(array)),
  detached: detachedCopy,
  otherType: (array) => OTHER_TYPE[typeName(array)].from(array),
};

/**
 * An invalid form of `value` (a typed array or a tensor named `name`): { form, value, blame, kind }:
 * the error must be a `kind` whose message starts with `blame`.
 */
export function invalidForm(rng, name, value) {
  const pick = (list) => list[Math.floor(rng() * list.length)];
  const impostor = () => pick(Object.keys(ARRAY_IMPOSTORS));
  if (isTypedArray(value)) {
    const form = impostor();
    return { form, value: ARRAY_IMPOSTORS[form](value), blame: name, kind: TypeError };
  }
  const { data, shape } = value;
  const forms = [
    () => {
      const form = impostor();
      return { form: `data: ${form}`, value: { data: ARRAY_IMPOSTORS[form](data), shape }, blame: `${name}.data`, kind: TypeError };
    },
    () => ({ form: 'not a tensor', value: pick([3, 'tensor', true, Symbol('t'), 2n, () => data]), blame: name, kind: TypeError }),
    () => ({ form: 'shape not an array', value: { data, shape: pick([shape.join(','), undefined, 7, { length: shape.length }]) }, blame: `${name}.shape`, kind: TypeError }),
  ];
  if (shape.length > 0) {
    forms.push(() => {
      // Same rank, one value more than data holds.
      const wrong = shape.map((_, axis) => (axis === shape.length - 1 ? data.length + 1 : 1));
      return { form: `shape [${wrong}] for ${data.length} values`, value: { data, shape: wrong }, blame: name, kind: RangeError };
    });
    const axis = Math.floor(rng() * shape.length);
    const withSize = (size) => shape.map((s, i) => (i === axis ? size : s));
    forms.push(() => {
      const bad = pick([-1, 1.5, NaN, Infinity, 2 ** 53]);
      return { form: `shape[${axis}] = ${bad}`, value: { data, shape: withSize(bad) }, blame: `${name}.shape[${axis}]`, kind: RangeError };
    });
    forms.push(() => {
      const bad = pick(['2', null, 2n, [2], undefined]);
      return { form: `shape[${axis}] a ${typeof bad}`, value: { data, shape: withSize(bad) }, blame: `${name}.shape[${axis}]`, kind: TypeError };
    });
  }
  return pick(forms)();
}
