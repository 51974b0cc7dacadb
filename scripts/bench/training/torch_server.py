"""PyTorch's side of the training-step benchmarks (scripts/bench/training/seq2seq.js,
transformer.js), for any of d2l's encoder-decoders: CPU, float32, a set number of threads. A small
server, so that the caller takes its samples in turns with the other runners. A script per model gives its model
builder (from the committed transcriptions of d2l in scripts/fixtures/, never a copy):

    /usr/bin/python3 scripts/bench/training/MODEL_torch.py TASK.json TASK.bin [--threads N]

TASK.json (written by scripts/bench/training/training.js): the configuration, the batch's sizes,
pad, lr, clip and the state-dict entries (names, shapes) in the order TASK.bin stores them; TASK.bin: int32
src [B, Ts], lengths [B], target input and output [B, Tt], then the float32 weights. Prints
{"loss", "torch", "blas", "threads"} (the batch's loss at these weights, no dropout), then per
input line N: N training steps as d2l's trainer takes them (zero_grad, forward, loss, backward,
clip_grad_norm_, Adam step) and {"ms": per step}.
"""

import argparse
import json
import re
import sys
import time
from pathlib import Path

import torch

# The fixture scripts (d2l's classes written out) import each other by bare name.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "fixtures"))


def read_task(json_path, bin_path):
    """(task, (src, lens, tgt_in, tgt_out) as int64 tensors, {name: float32 tensor})."""
    task = json.loads(Path(json_path).read_text())
    raw = Path(bin_path).read_bytes()
    B, Ts, Tt = task["batch"], task["srcSteps"], task["tgtSteps"]
    int_bytes = 4 * (B * Ts + B + 2 * B * Tt)
    ints = torch.frombuffer(bytearray(raw[:int_bytes]), dtype=torch.int32).long()
    src, ints = ints[: B * Ts].reshape(B, Ts), ints[B * Ts:]
    lens, ints = ints[:B], ints[B:]
    tgt_in, tgt_out = ints[: B * Tt].reshape(B, Tt), ints[B * Tt:].reshape(B, Tt)
    floats = torch.frombuffer(bytearray(raw[int_bytes:]), dtype=torch.float32)
    state, offset = {}, 0
    for entry in task["parameters"]:
        count = 1
        for size in entry["shape"]:
            count *= size
        state[entry["name"]] = floats[offset:offset + count].reshape(entry["shape"])
        offset += count
    if offset != floats.numel():
        sys.exit(f"{bin_path} holds {floats.numel() - offset} more weights than {json_path} lists")
    return task, (src, lens, tgt_in, tgt_out), state


def blas():
    """Which BLAS this torch was built with: Debian's python3-torch says "generic" (no MKL)."""
    match = re.search(r"BLAS_INFO=(\w+)", torch.__config__.show())
    return match[1] if match else "unknown"


def serve(build, canonical=lambda name: name):
    """build(config, seed) -> a d2l Seq2Seq (dropout 0) with a .loss; canonical(torch name) -> the
    task's name for that entry (ours where they differ)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("task_json")
    parser.add_argument("task_bin")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    task, (src, lens, tgt_in, tgt_out), state = read_task(args.task_json, args.task_bin)
    model = build(task["config"], seed=0)  # dropout 0, as the benchmark runs every runner
    model.tgt_pad = task["pad"]
    model(src, tgt_in, lens)  # materialises d2l's lazy layers
    model.load_state_dict({name: state[canonical(name)] for name in model.state_dict()})

    # Training mode: d2l's Transformer decoder is causal only there (as ours always is); with
    # dropout 0 the mode changes nothing else, in either model.
    model.train()
    with torch.no_grad():
        loss = model.loss(model(src, tgt_in, lens), tgt_out)
    print(json.dumps({"loss": float(loss), "torch": torch.__version__, "blas": blas(),
                      "threads": torch.get_num_threads()}), flush=True)

    optimizer = torch.optim.Adam(model.parameters(), lr=task["lr"])

    def step():
        optimizer.zero_grad()
        loss = model.loss(model(src, tgt_in, lens), tgt_out)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), task["clip"])
        optimizer.step()

    answer_samples(step)


def answer_samples(step):
    """The server's loop: per input line N, N calls of step() and {"ms": per call}."""
    for line in sys.stdin:
        reps = int(line)
        start = time.perf_counter()
        for _ in range(reps):
            step()
        print(json.dumps({"ms": (time.perf_counter() - start) * 1000 / reps}), flush=True)
