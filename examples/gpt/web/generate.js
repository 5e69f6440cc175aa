// Greedy generation with the GPT exported by examples/gpt/web/export.py (gpt.js): the
// prompt goes in one token a step, then each step makes a new token. A step is one
// replay of the exported graph, one command buffer: the embedding, every layer, the final
// layer norm, the output head, the greedy choice (into `tok`, the next step's input, and
// `hist`) and the move to the next position (`pos`), all on the GPU.

/** The `count` tokens after `prompt` (an array of token ids), as an array; `onToken(id)`
 * is called as each is made (reading it back after its step; without it, all are read
 * at the end). `blockSize` is the model's (model.json): the prompt and the new tokens
 * but the last must fit it. */
export async function generate(device, graph, prompt, count, blockSize, onToken) {
  if (!prompt.length || count < 1 || prompt.length + count - 1 > blockSize) {
    throw new RangeError(`a prompt of 1 to ${blockSize} tokens and at least one new one, ` +
      `${blockSize + 1} in all at most: got ${prompt.length} and ${count}`);
  }
  const { tok, pos, hist } = graph.buffers;
  device.queue.writeBuffer(pos, 0, new Int32Array([0]));
  for (const id of prompt) { // writes are ordered with the steps: each step sees its token
    device.queue.writeBuffer(tok, 0, new Int32Array([id]));
    await graph.run();
  }
  const made = [];
  for (let i = 0; i < count; i++) {
    if (i) await graph.run(); // on the token the step before chose
    if (onToken) {
      made.push((await readInts(device, tok, 1))[0]);
      onToken(made[i]);
    }
  }
  if (onToken) return made;
  const all = await readInts(device, hist, prompt.length + count);
  return Array.from(all.slice(prompt.length, prompt.length + count));
}

async function readInts(device, buffer, count) {
  const size = Math.ceil(count * 4 / 4) * 4;
  const staging = device.createBuffer({ size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const encoder = device.createCommandEncoder();
  encoder.copyBufferToBuffer(buffer, 0, staging, 0, size);
  device.queue.submit([encoder.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const ints = new Int32Array(staging.getMappedRange().slice(0));
  staging.destroy();
  return ints;
}
