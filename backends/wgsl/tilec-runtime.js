// The tilec web runtime: launches kernels exported by `tilec export --target web`.
//
// One module for every exported kernel. An exported module holds its WGSL and the
// facts of its parameters, and calls `kernel(spec)` for its launcher:
//
//   const out = await softmax(device, grid, x, out, n_cols, x_stride, out_stride);
//
// A module of several kernels (`tc.export_program`) also exports a `program` whose
// `run(device, launches)` encodes many launches into one compute pass of one command
// buffer, each with its scalars in its own slot of a uniform arena:
//
//   await program.run(device, [["layernorm", [rows], x, w, b, y, n], [matmul, ...]]);
//
// Arrays are GPUBuffers (bound as they are), ranges of them (`{ buffer, offset, size }`,
// a GPUBufferBinding: the offset a multiple of minStorageBufferOffsetAlignment) or typed
// arrays (uploaded to a new buffer, and copied back into the same typed array when the
// kernel writes it), as the Python wgsl runtime takes wgpu buffers, views or NumPy
// arrays. Scalars go in one uniform buffer with the grid. The checks, the grid folding
// (axis 0 over maxComputeWorkgroupsPerDimension programs), the aliasing rules and the
// subgroup variants are the Python runtime's (backends/wgsl/runtime.py, aliasing.py,
// subgroups.py); keep the two in step.

export class LaunchError extends Error {
  constructor(message) {
    super(message);
    this.name = "LaunchError";
  }
}

export class UnsupportedError extends Error {
  constructor(message) {
    super(message);
    this.name = "UnsupportedError";
  }
}

// dtype -> the typed arrays that hold it (f16 as raw bits, or Float16Array; bf16 as bits)
const TYPED = {
  f32: ["Float32Array"], i32: ["Int32Array"], u32: ["Uint32Array"],
  f16: ["Uint16Array", "Float16Array"], bf16: ["Uint16Array"], i16: ["Int16Array"],
  i8: ["Int8Array"], u8: ["Uint8Array"], i1: ["Uint8Array"], i64: ["BigInt64Array"],
};
const INT_RANGE = {
  i32: [-(2 ** 31), 2 ** 31], u32: [0, 2 ** 32], i1: [0, 2], i8: [-(2 ** 7), 2 ** 7],
  u8: [0, 2 ** 8], i16: [-(2 ** 15), 2 ** 15], i64: [-(2n ** 63n), 2n ** 63n],
};
const GROUPS = 64; // bind groups kept per pipeline (launches on GPUBuffers: a program's layers)

// GPUBufferUsage is a global in browsers and Deno; the numbers are the spec's
const USAGE = globalThis.GPUBufferUsage ??
  { MAP_READ: 1, COPY_SRC: 4, COPY_DST: 8, UNIFORM: 64, STORAGE: 128 };
const COMPUTE = globalThis.GPUShaderStage?.COMPUTE ?? 4;

// device -> (kernel spec -> Map(how arrays alias -> Dispatcher))
const dispatchers = new WeakMap();

/** The launcher of one exported kernel: `await launch(device, grid, ...args)`. */
export function kernel(spec) {
  const launch = (device, grid, ...args) => run(spec, device, grid, args);
  Object.defineProperty(launch, "name", { value: spec.name });
  launch.spec = spec;
  return launch;
}

function checkDeviceArgument(device, what) {
  if (!device || typeof device.createBuffer !== "function" || !device.queue) {
    throw new LaunchError(`${what}: the first argument must be a GPUDevice`);
  }
}

/** A launch's dispatch size and uniform words, checked: the grid, the number of
 * arguments, the device's features and limits, and each scalar. */
function prepare(spec, device, grid, args) {
  const dims = checkGrid(grid);
  if (args.length !== spec.params.length) {
    const names = spec.params.map((p) => p.name).join(", ");
    throw new LaunchError(`${spec.name} takes ${spec.params.length} arguments ` +
      `(${names}) after the device and the grid, got ${args.length}`);
  }
  checkDevice(spec, device);
  const words = new Uint32Array(spec.facts.uniform.size / 4);
  const [dispatch, foldX, foldN] = fold(dims, device.limits.maxComputeWorkgroupsPerDimension);
  words.set([...dims, foldX, foldN]); // the uniform's first fields (kernel.py)
  spec.params.forEach((p, i) => {
    if (spec.facts.params[i].kind === "scalar") pack(words, spec.facts.params[i], p, args[i]);
  });
  return { dispatch, words };
}

async function run(spec, device, grid, args) {
  checkDeviceArgument(device, spec.name);
  const { dispatch, words } = prepare(spec, device, grid, args);
  await subgroupSize(device);
  const bound = [], uploads = new Map();
  try {
    spec.params.forEach((p, i) => {
      const f = spec.facts.params[i], arg = args[i];
      if (f.kind === "scalar") return;
      if (isBuffer(arg) || isBinding(arg)) {
        bound.push(checkBuffer(device, p, arg));
      } else {
        checkArray(p, arg);
        if (!uploads.has(arg)) { // one buffer per array, so aliasing is kept
          uploads.set(arg, { buf: upload(device, p, arg), written: false });
        }
        uploads.get(arg).written ||= p.written;
        bound.push(whole(uploads.get(arg).buf));
      }
    });
    dispatcher(spec, device, aliasing(spec, bound))
      .run(bound, words, dispatch, uploads.size === 0);
    await Promise.all([...uploads].filter(([, u]) => u.written)
      .map(([arr, u]) => download(device, u.buf, arr)));
  } finally { // submitted work keeps what it uses: destroying the buffers cannot cut it short
    uploads.forEach((u) => u.buf.destroy());
  }
}

// ------------------------------------------------------------ programs

/** The program of `kernels` (name -> launcher): `await program.run(device, launches)`
 * encodes every launch `[kernel, grid, ...args]` (a launcher of the program, or its name)
 * in order into one compute pass of one command buffer and submits it. Arrays must be
 * GPUBuffers (a typed array would need a copy back after each launch). Every launch is
 * checked before any is encoded, so a bad one submits nothing; its error names it. */
export function program(kernels) {
  const arenas = new WeakMap(); // device -> this program's uniform arena there
  const named = new Map(Object.entries(kernels));
  const specs = new Set([...named.values()].map((k) => k.spec));
  const run = async (device, launches) => {
    checkDeviceArgument(device, "program.run");
    if (!Array.isArray(launches)) {
      throw new LaunchError("program.run: launches must be an array of [kernel, grid, ...args]");
    }
    const prepared = launches.map((launch, i) => prepareLaunch(named, specs, device, launch, i));
    const align = device.limits.minUniformBufferOffsetAlignment;
    const slots = [];
    let size = 0;
    for (const p of prepared) {
      slots.push(size);
      size += Math.ceil(p.words.byteLength / align) * align;
    }
    if (!prepared.length) return;
    await subgroupSize(device);
    let arena = arenas.get(device);
    if (!arena || arena.size < size) {
      arena?.destroy();
      arena = device.createBuffer({ label: "tilec program arguments", size,
        usage: USAGE.UNIFORM | USAGE.COPY_DST });
      arenas.set(device, arena);
    }
    const words = new Uint8Array(size);
    prepared.forEach((p, i) => words.set(new Uint8Array(p.words.buffer), slots[i]));
    device.queue.writeBuffer(arena, 0, words); // ordered before the submission below
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    prepared.forEach((p, i) => {
      const d = dispatcher(p.spec, device, p.shape);
      pass.setPipeline(d.pipeline);
      pass.setBindGroup(0, d.group(p.bound, arena, true), [slots[i]]);
      pass.dispatchWorkgroups(...p.dispatch);
    });
    pass.end();
    device.queue.submit([encoder.finish()]);
  };
  return { kernels, run };
}

function prepareLaunch(named, specs, device, launch, i) {
  if (!Array.isArray(launch)) {
    throw new LaunchError(`launch ${i}: expected [kernel, grid, ...args], got ${typeName(launch)}`);
  }
  const [which, grid, ...args] = launch;
  const launcher = typeof which === "string" ? named.get(which) : which;
  const label = `launch ${i}` + (launcher?.spec ? ` (${launcher.spec.name})` : "");
  if (!launcher?.spec || !specs.has(launcher.spec)) {
    const names = [...named.keys()].join(", ");
    const got = typeof which === "string" ? `"${which}"` : typeName(which);
    throw new LaunchError(`${label}: expected [kernel, grid, ...args] with a kernel of ` +
      `this program (${names}), got ${got}`);
  }
  const { spec } = launcher;
  try {
    const { dispatch, words } = prepare(spec, device, grid, args);
    const bound = [];
    spec.params.forEach((p, j) => {
      if (spec.facts.params[j].kind === "scalar") return;
      if (!isBuffer(args[j]) && !isBinding(args[j])) {
        throw new LaunchError(`argument ${p.name}: program.run takes GPUBuffers (or ` +
          `{ buffer, offset, size }), got ${typeName(args[j])}`);
      }
      bound.push(checkBuffer(device, p, args[j]));
    });
    const shape = aliasing(spec, bound); // checked now: a bad launch submits nothing
    return { spec, dispatch, words, bound, shape };
  } catch (e) {
    if (e instanceof LaunchError || e instanceof UnsupportedError) {
      e.message = `${label}: ${e.message}`;
    }
    throw e;
  }
}

// ------------------------------------------------------------ validation

function checkGrid(grid) {
  const g = typeof grid === "number" ? [grid] : Array.isArray(grid) ? grid : null;
  if (!g || g.length < 1 || g.length > 3 ||
      !g.every((x) => Number.isInteger(x) && x > 0)) {
    throw new LaunchError(`grid ${JSON.stringify(grid)} must be 1 to 3 positive integers`);
  }
  return [...g, 1, 1].slice(0, 3);
}

/** Dispatch size, fold_x and fold_n: axis 0 beyond `most` workgroups is split into
 * fold_n rows of fold_x (the last row padded), as `fold` in the Python runtime. */
export function fold([g0, g1, g2], most) {
  const rows = Math.ceil(g0 / most);
  const width = Math.ceil(g0 / rows);
  if (g1 * rows > most || g2 > most) {
    throw new LaunchError(`grid [${g0}, ${g1}, ${g2}] is too large for WebGPU: at most ` +
      `${most} programs on axes 1 and 2, and axis 1 times ${rows} (folding axis 0)`);
  }
  return [[width, g1 * rows, g2], width, rows];
}

function checkDevice(spec, device) {
  for (const feature of spec.facts.features) {
    if (!device.features.has(feature)) {
      throw new UnsupportedError(`kernel ${spec.name} needs the WebGPU feature ` +
        `"${feature}": request it in requestDevice({requiredFeatures})`);
    }
  }
  const arrays = spec.facts.params.filter((f) => f.kind === "ptr").length;
  const most = device.limits.maxStorageBuffersPerShaderStage;
  if (arrays > most) {
    throw new UnsupportedError(`kernel ${spec.name} takes ${arrays} arrays; this device ` +
      `binds at most ${most} (raise maxStorageBuffersPerShaderStage in requestDevice)`);
  }
  if (spec.facts.workgroup_size > device.limits.maxComputeInvocationsPerWorkgroup) {
    throw new UnsupportedError(`kernel ${spec.name} needs ${spec.facts.workgroup_size} ` +
      "threads per program, more than this device allows");
  }
}

function isBuffer(arg) {
  return typeof globalThis.GPUBuffer === "function" ? arg instanceof GPUBuffer
    : !!arg && typeof arg.mapAsync === "function";
}

function isBinding(arg) {
  return !!arg && typeof arg === "object" && !ArrayBuffer.isView(arg) && isBuffer(arg.buffer);
}

function whole(buffer) {
  return { buffer, offset: 0, size: buffer.size };
}

/** The checked `{ buffer, offset, size }` a GPUBuffer or a range of one binds. */
function checkBuffer(device, p, arg) {
  const buffer = isBuffer(arg) ? arg : arg.buffer;
  const offset = isBuffer(arg) ? 0 : arg.offset ?? 0;
  const size = isBuffer(arg) ? buffer.size : arg.size ?? buffer.size - offset;
  if (!(buffer.usage & USAGE.STORAGE)) {
    throw new LaunchError(`argument ${p.name}: the GPUBuffer lacks STORAGE usage`);
  }
  const align = device.limits.minStorageBufferOffsetAlignment;
  if (!Number.isInteger(offset) || offset < 0 || offset % align ||
      !Number.isInteger(size) || offset + size > buffer.size) {
    throw new LaunchError(`argument ${p.name}: a range of a GPUBuffer must start at a ` +
      `multiple of ${align} bytes and end within it, got ${offset} + ${size} of ${buffer.size}`);
  }
  const most = device.limits.maxStorageBufferBindingSize;
  if (size % 4 || size > most) {
    throw new LaunchError(`argument ${p.name}: a storage binding must be a multiple of ` +
      `4 bytes and at most ${most}, got ${size}`);
  }
  return { buffer, offset, size };
}

function typeName(arg) {
  return arg === null ? "null" : arg?.constructor?.name ?? typeof arg;
}

function checkArray(p, arg) {
  if (!ArrayBuffer.isView(arg) || arg instanceof DataView ||
      !TYPED[p.dtype].includes(arg.constructor.name)) {
    throw new LaunchError(`argument ${p.name}: expected a ${TYPED[p.dtype].join(" or ")} ` +
      `or a GPUBuffer of ${p.dtype}, got ${typeName(arg)}`);
  }
}

/** Write a scalar argument into the uniform words (ints as their u32 pattern; an i64,
 * a BigInt or an integer Number, as two, low first). */
function pack(words, f, p, arg) {
  if (typeof arg === "boolean") arg = Number(arg);
  if (f.type === "i64" && Number.isInteger(arg)) arg = BigInt(arg);
  if (typeof arg !== (f.type === "i64" ? "bigint" : "number")) {
    const want = f.type === "i64" ? "a BigInt or an integer" : "a number";
    throw new LaunchError(`argument ${p.name}: expected ${want} (${p.dtype}), ` +
      `got ${typeName(arg)}`);
  }
  if (f.type === "f32") {
    new Float32Array(words.buffer)[f.offset / 4] = arg;
    return;
  }
  const [lo, hi] = INT_RANGE[p.dtype];
  if (typeof arg === "number" && !Number.isInteger(arg)) {
    throw new LaunchError(`argument ${p.name}: expected an integer (${p.dtype}), got ${arg}`);
  }
  if (arg < lo || arg >= hi) {
    throw new LaunchError(`argument ${p.name}: ${arg} does not fit in ${p.dtype}`);
  }
  if (p.divisibility && arg % (typeof arg === "bigint" ? BigInt(p.divisibility)
    : p.divisibility)) {
    throw new LaunchError(`argument ${p.name}: the kernel was exported for multiples of ` +
      `${p.divisibility} (":${p.divisibility}" in its signature), got ${arg}`);
  }
  if (typeof arg === "bigint") {
    words[f.offset / 4] = Number(BigInt.asUintN(32, arg));
    words[f.offset / 4 + 1] = Number(BigInt.asUintN(32, arg >> 32n));
    return;
  }
  words[f.offset / 4] = arg >>> 0;
}

// ------------------------------------------------------------ buffers

function upload(device, p, arr) {
  const size = Math.max(4, Math.ceil(arr.byteLength / 4) * 4);
  const most = device.limits.maxStorageBufferBindingSize;
  if (size > most) {
    throw new LaunchError(`argument ${p.name}: ${arr.byteLength} bytes is more than this ` +
      `device binds (${most})`);
  }
  const buf = device.createBuffer({
    label: p.name, size, usage: USAGE.STORAGE | USAGE.COPY_DST | USAGE.COPY_SRC,
    mappedAtCreation: true,
  });
  new Uint8Array(buf.getMappedRange()).set(
    new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength));
  buf.unmap();
  return buf;
}

async function download(device, buf, arr) {
  const staging = device.createBuffer({
    size: buf.size, usage: USAGE.MAP_READ | USAGE.COPY_DST,
  });
  const encoder = device.createCommandEncoder();
  encoder.copyBufferToBuffer(buf, 0, staging, 0, buf.size);
  device.queue.submit([encoder.finish()]);
  try {
    await staging.mapAsync(1 /* GPUMapMode.READ */);
    new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength)
      .set(new Uint8Array(staging.getMappedRange(), 0, arr.byteLength));
  } finally {
    staging.destroy();
  }
}

/** How a dispatch binds arrays that share a buffer, which WebGPU (as Chrome's Dawn checks)
 * allows only where nothing writes it: in a buffer the kernel writes, `merged` maps a
 * binding to the first one bound to the same range (the shader variant declares that one
 * alone, read_write, and both parameters name it), and `promoted` lists the read-only
 * bindings declared read_write as the buffer is written through another range (WebGPU
 * forbids one buffer in both roles). Other overlapping ranges of it cannot be bound. */
function aliasing(spec, bound) {
  const pointers = spec.facts.params.filter((f) => f.kind === "ptr");
  const names = spec.params.filter((_, i) => spec.facts.params[i].kind === "ptr");
  const merged = new Map(), written = new Set();
  bound.forEach((b, i) => {
    if (pointers[i].access === "read_write") written.add(b.buffer);
  });
  bound.forEach((b, i) => {
    if (!written.has(b.buffer)) return; // read-only bindings may alias
    for (let j = 0; j < i && !merged.has(pointers[i].binding); j++) {
      const a = bound[j];
      if (a.buffer !== b.buffer || merged.has(pointers[j].binding)) continue;
      if (a.offset === b.offset && a.size === b.size && pointers[i].dtype === pointers[j].dtype) {
        merged.set(pointers[i].binding, pointers[j].binding);
      } else if (a.offset < b.offset + b.size && b.offset < a.offset + a.size) {
        throw new LaunchError(`arguments ${names[j].name} and ${names[i].name} overlap in ` +
          "one GPUBuffer that the kernel writes: WebGPU binds that only as the same range " +
          "of the same dtype; pass that, or separate buffers");
      }
    }
  });
  const promoted = pointers.filter((f, i) => f.access === "read" &&
    written.has(bound[i].buffer) && !merged.has(f.binding)).map((f) => f.binding);
  return { merged, promoted };
}

// ------------------------------------------------------------ subgroups

const SUBGROUP_SIZES = [4, 8, 16, 32]; // where a warp of 32 threads is whole subgroups
const PROBE_THREADS = 128;
const probes = new WeakMap(); // device -> the promise of its subgroup size
const subgroupSizes = new WeakMap(); // device -> its subgroup size (or null), once probed

/** The size of every subgroup of `device` (a promise), found once by a dispatch (as the
 * Python runtime's `subgroup_size`): null unless the device was requested with the "subgroups"
 * feature, its subgroups are a size of SUBGROUP_SIZES, and each is that many consecutive
 * invocations. Kept for `variant`, which the dispatchers made after it use. */
export function subgroupSize(device) {
  if (!device.features?.has("subgroups")) return null;
  if (!probes.has(device)) probes.set(device, probe(device));
  return probes.get(device);
}

async function probe(device) {
  const code = `enable subgroups;
@group(0) @binding(0) var<storage, read_write> out: array<u32, ${PROBE_THREADS}>;
@compute @workgroup_size(${PROBE_THREADS})
fn main(@builtin(local_invocation_index) lid: u32, @builtin(subgroup_size) size: u32,
        @builtin(subgroup_invocation_id) id: u32) {
  out[lid] = size * 65536u + id;
}`;
  const buf = device.createBuffer({ size: 4 * PROBE_THREADS, usage: USAGE.STORAGE | USAGE.COPY_SRC });
  const pipeline = device.createComputePipeline({ layout: "auto",
    compute: { module: device.createShaderModule({ code }), entryPoint: "main" } });
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, device.createBindGroup({ layout: pipeline.getBindGroupLayout(0),
    entries: [{ binding: 0, resource: { buffer: buf } }] }));
  pass.dispatchWorkgroups(1);
  pass.end();
  device.queue.submit([encoder.finish()]);
  const seen = new Uint32Array(PROBE_THREADS);
  await download(device, buf, seen);
  buf.destroy();
  const size = seen[0] >>> 16;
  const ok = SUBGROUP_SIZES.includes(size) &&
    seen.every((v, lid) => v >>> 16 === size && (v & 0xffff) === lid % size);
  const found = ok ? size : null;
  subgroupSizes.set(device, found);
  return found;
}

/** `code` with its shuffles through workgroup memory swapped for subgroup shuffles
 * where subgroups of `size` make them exact (the kernel's `subgroup_xor` wrappers of
 * masks below the size; where subgroups are warps, its `subgroup` helpers too), and the
 * `enable` they need; unchanged for a size of null. */
export function withSubgroups(code, facts, size) {
  if (!size) return code;
  let swapped = code;
  for (const [wrapper, [mask, native]] of Object.entries(facts.subgroup_xor ?? {})) {
    if (mask < size) swapped = swapped.replace(wrapper, native);
  }
  if (size === 32) {
    for (const [emulated, native] of Object.entries(facts.subgroup ?? {})) {
      swapped = swapped.replace(emulated, native);
    }
  }
  return swapped === code ? code : `enable subgroups;\n${swapped}`;
}

// ------------------------------------------------------------ pipelines

function dispatcher(spec, device, shape) {
  let perDevice = dispatchers.get(device);
  if (!perDevice) dispatchers.set(device, perDevice = new Map());
  let perSpec = perDevice.get(spec);
  if (!perSpec) perDevice.set(spec, perSpec = new Map());
  const key = `${shape.promoted.join(",")}|${[...shape.merged].join(";")}`;
  if (!perSpec.has(key)) perSpec.set(key, new Dispatcher(spec, device, shape));
  return perSpec.get(key);
}

/** The WGSL of `spec` with `promoted` bindings read_write, and each binding of `merged`
 * undeclared, its parameter's name replaced by the one it merges into. */
function variant(spec, { merged, promoted }, device) {
  let code = withSubgroups(spec.wgsl, spec.facts, subgroupSizes.get(device) ?? null);
  for (const b of promoted) {
    code = code.replace(`@binding(${b}) var<storage, read> `,
      `@binding(${b}) var<storage, read_write> `);
  }
  const declared = (b) => new RegExp(`^@group\\(0\\) @binding\\(${b}\\) var<storage, ` +
    "(read|read_write)> (\\w+): .*$", "m");
  for (const [b, into] of merged) {
    const gone = code.match(declared(b)), target = code.match(declared(into));
    code = code.replace(declared(b), "").replaceAll(new RegExp(`\\b${gone[2]}\\b`, "g"),
      target[2]);
    code = code.replace(target[0], oneDeclaration(target[0], gone[0]));
    code = atomicAccesses(code, target[2], target[0], gone[0]);
  }
  return code;
}

/** A declaration's array item (`f32`, `atomic<u32>`) at [1], its atomic type at [2]. */
const item = (declaration) => declaration.match(/array<(atomic<(\w+)>|\w+)>/);

/** The declaration of a merged binding: read_write, and atomic if either was. */
function oneDeclaration(target, gone) {
  const merged = target.replace("var<storage, read> ", "var<storage, read_write> ");
  const [t, g] = [item(target), item(gone)];
  return g[2] && !t[2] ? merged.replace(`array<${t[1]}>`, `array<${g[1]}>`) : merged;
}

/** `code` with the plain accesses of `name` atomic where one of the two merged
 * declarations was atomic and the other not: `name[i]` read by `atomicLoad`, `name[i] =
 * v;` by `atomicStore`, bit-cast where the element types differ (as aliasing.py does). */
function atomicAccesses(code, name, target, gone) {
  const [t, g] = [item(target), item(gone)];
  if (!t[2] === !g[2]) return code;
  const [plain, atomic] = t[2] ? [g[1], t[2]] : [t[1], g[2]];
  const conv = (e, from, to) => from === to ? e : `bitcast<${to}>(${e})`;
  const access = new RegExp(`(?<![\\w&])${name}\\[`, "g");
  let out = "", at = 0, found;
  while ((found = access.exec(code)) !== null) {
    if (found.index < at) continue;
    let end = access.lastIndex, depth = 1;
    while (depth) depth += { "[": 1, "]": -1 }[code[end++]] ?? 0;
    const text = code.slice(found.index, end), store = /^\s*=(?!=)\s*/.exec(code.slice(end));
    out += code.slice(at, found.index);
    if (store) {
      const stop = code.indexOf(";", end);
      out += `atomicStore(&${text}, ${conv(code.slice(end + store[0].length, stop), plain, atomic)})`;
      at = stop;
    } else {
      out += conv(`atomicLoad(&${text})`, atomic, plain);
      at = end;
    }
  }
  return out + code.slice(at);
}

// device -> Map(WGSL and bindings -> [bind group layout, pipeline]): one kernel exported in
// several modules (or in a module and a program) is compiled once on a device
const pipelines = new WeakMap();

function pipeline(device, label, code, entryPoint, entries) {
  let cache = pipelines.get(device);
  if (!cache) pipelines.set(device, cache = new Map());
  const key = `${JSON.stringify(entries)}\n${entryPoint}\n${code}`;
  if (!cache.has(key)) {
    const layout = device.createBindGroupLayout({ entries });
    cache.set(key, [layout, device.createComputePipeline({
      label,
      layout: device.createPipelineLayout({ bindGroupLayouts: [layout] }),
      compute: { module: device.createShaderModule({ label, code }), entryPoint },
    })]);
  }
  return cache.get(key);
}

/** One pipeline on one device, with its uniform buffer of arguments (rewritten by each
 * launch: writeBuffer is ordered with the submissions) and its recent bind groups. */
class Dispatcher {
  constructor(spec, device, shape) {
    const { facts } = spec;
    const { merged, promoted } = shape;
    const written = (f) => f.access === "read_write" || promoted.includes(f.binding) ||
      [...merged].some(([b, into]) => into === f.binding &&
        facts.params.find((g) => g.binding === b).access === "read_write");
    this.pointers = facts.params.filter((f) => f.kind === "ptr");
    const entries = this.pointers.filter((f) => !merged.has(f.binding)).map((f) => ({
      binding: f.binding, visibility: COMPUTE,
      buffer: { type: written(f) ? "storage" : "read-only-storage" },
    }));
    entries.push({ binding: facts.uniform.binding, visibility: COMPUTE,
      buffer: { type: "uniform", hasDynamicOffset: true } }); // a program's arena slot
    this.device = device;
    this.merged = merged;
    this.uniformBinding = facts.uniform.binding;
    this.uniformSize = facts.uniform.size;
    [this.layout, this.pipeline] = pipeline(device, spec.name, variant(spec, shape, device),
      facts.entry, entries);
    this.uniform = device.createBuffer({
      size: facts.uniform.size, usage: USAGE.UNIFORM | USAGE.COPY_DST,
    });
    this.groups = []; // [buffers, bind group], newest last
  }

  /** The bind group of `bound` and `uniform` (a slot of its size at a dynamic offset). */
  group(bound, uniform, cache) {
    const same = (bs) => bs.length === bound.length + 1 && bs[bound.length] === uniform &&
      bound.every((b, i) => b.buffer === bs[i].buffer && b.offset === bs[i].offset &&
        b.size === bs[i].size);
    const hit = this.groups.find(([bs]) => same(bs));
    if (hit) return hit[1];
    const entries = bound.map((resource, i) => ({ binding: this.pointers[i].binding, resource }))
      .filter((e) => !this.merged.has(e.binding));
    entries.push({ binding: this.uniformBinding,
      resource: { buffer: uniform, size: this.uniformSize } });
    const group = this.device.createBindGroup({ layout: this.layout, entries });
    if (cache) {
      if (this.groups.length >= GROUPS) this.groups.shift();
      this.groups.push([[...bound, uniform], group]);
    }
    return group;
  }

  run(bound, words, dispatch, cache) {
    this.device.queue.writeBuffer(this.uniform, 0, words);
    const encoder = this.device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setPipeline(this.pipeline);
    pass.setBindGroup(0, this.group(bound, this.uniform, cache), [0]);
    pass.dispatchWorkgroups(...dispatch);
    pass.end();
    this.device.queue.submit([encoder.finish()]);
  }
}
