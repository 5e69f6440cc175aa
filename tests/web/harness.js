// Helpers for the web-export tests (tests/test_web_export.py), run by Deno: a WebGPU
// device, and arrays passed between Python and JavaScript as raw files in the current
// directory (the test's temporary one).

export async function gpu(requiredFeatures = []) {
  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter) throw new Error("no WebGPU adapter");
  return await adapter.requestDevice({ requiredFeatures });
}

export async function load(name, Type) {
  const bytes = await Deno.readFile(`${name}.bin`);
  return new Type(bytes.buffer, bytes.byteOffset, bytes.byteLength / Type.BYTES_PER_ELEMENT);
}

export async function save(name, arr) {
  await Deno.writeFile(`${name}.out.bin`,
    new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength));
}

/** A storage buffer holding `arr` (COPY_SRC, to be read back by `read`). */
export function storage(device, arr, usage = GPUBufferUsage.STORAGE) {
  const buf = device.createBuffer({
    size: Math.max(4, Math.ceil(arr.byteLength / 4) * 4),
    usage: usage | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
  });
  device.queue.writeBuffer(buf, 0, arr.buffer, arr.byteOffset, arr.byteLength);
  return buf;
}

export async function read(device, buf, Type) {
  const staging = device.createBuffer({
    size: buf.size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
  });
  const encoder = device.createCommandEncoder();
  encoder.copyBufferToBuffer(buf, 0, staging, 0, buf.size);
  device.queue.submit([encoder.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const out = new Type(staging.getMappedRange().slice(0));
  staging.destroy();
  return out;
}

/** Prints, one per line as JSON, the error each call's promise rejects with. */
export async function errors(calls) {
  for (const call of calls) {
    try {
      await call();
      console.log(JSON.stringify({ name: "none", message: "" }));
    } catch (e) {
      console.log(JSON.stringify({ name: e.name, message: e.message }));
    }
  }
}
