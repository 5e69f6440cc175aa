"""Continue a prompt with a GPT that ``examples.gpt.train --save`` wrote, on the chosen
backend: the prompt runs once, then each new byte alone against the key/value cache;
temperature 0 is greedy, --top-k keeps the K likeliest bytes at each draw.

    python -m examples.gpt.sample --load CKPT [--backend ptx|wgsl|numpy|auto]
        [--prompt TEXT] [--max-new-tokens N] [--temperature T] [--top-k K] [--seed S]
        [--dtype float32|bfloat16]
"""

from __future__ import annotations

import sys
import time

from compiler.cli import reported_errors, script_parser
from examples.gpt import data
from examples.gpt.model import DTYPES, GPT


def sample(a) -> str:
    """The prompt and its continuation, as text (the timing on stderr)."""
    model = GPT.load(a.load, a.backend, a.dtype)
    prompt = data.encode(a.prompt)[None, :]
    start = time.perf_counter()
    out = model.generate(prompt, a.max_new_tokens, a.temperature, a.top_k, a.seed)
    seconds = time.perf_counter() - start
    print(f"sample: {a.max_new_tokens} tokens in {seconds:.2f} s on {model.backend}",
          file=sys.stderr)
    return data.decode(out[0])


def main(argv: list[str] | None = None) -> None:
    p = script_parser(__doc__)
    p.prog = "python -m examples.gpt.sample"
    p.add_argument("--load", required=True, help="an npz checkpoint of examples.gpt.train")
    p.add_argument("--prompt", default="def ")
    p.add_argument("--max-new-tokens", type=int, default=200)
    p.add_argument("--temperature", type=float, default=0.8)
    p.add_argument("--top-k", type=int)
    p.add_argument("--seed", type=int)
    p.add_argument("--dtype", choices=DTYPES, default="float32")
    a = p.parse_args(argv)
    if not a.prompt:
        p.error("--prompt must hold at least one character")
    with reported_errors():
        print(sample(a))


if __name__ == "__main__":
    main()
