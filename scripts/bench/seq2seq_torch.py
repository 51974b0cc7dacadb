"""PyTorch's side of the Seq2Seq training-step benchmark (scripts/bench/seq2seq.js): d2l's model,
built by the fixture script's classes (scripts/fixtures/seq2seq.py, d2l's code written out), CPU,
one thread, float32. A small server, so that the caller takes its samples in turns with the
other runners:

    /usr/bin/python3 scripts/bench/seq2seq_torch.py TASK.json TASK.bin

TASK.json: the configuration, the batch's sizes, pad, lr, clip and the state-dict entries
(names, shapes) in the order TASK.bin stores them; TASK.bin: int32 src [B, Ts], lengths [B],
target input and output [B, Tt], then the float32 weights. Prints {"loss": ...} (the batch's
loss at these weights, no dropout), then per input line N: N training steps as d2l's trainer
takes them (zero_grad, forward, loss, backward, clip_grad_norm_, Adam step) and {"ms": per step}.
"""

import json
import re
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))
from seq2seq import build, canonical  # noqa: E402  (d2l's classes)


def main():
    task = json.loads(Path(sys.argv[1]).read_text())
    raw = Path(sys.argv[2]).read_bytes()
    torch.set_num_threads(1)

    B, Ts, Tt = task["batch"], task["srcSteps"], task["tgtSteps"]
    ints = torch.frombuffer(bytearray(raw[: 4 * (B * Ts + B + 2 * B * Tt)]), dtype=torch.int32).long()
    src, ints = ints[: B * Ts].reshape(B, Ts), ints[B * Ts:]
    lens, ints = ints[:B], ints[B:]
    tgt_in, tgt_out = ints[: B * Tt].reshape(B, Tt), ints[B * Tt:].reshape(B, Tt)
    floats = torch.frombuffer(bytearray(raw[4 * (B * Ts + B + 2 * B * Tt):]), dtype=torch.float32)

    model = build(task["config"], seed=0)  # dropout 0, as the benchmark runs every runner
    model.tgt_pad = task["pad"]
    model(src, tgt_in, lens)  # materialises the lazy layers

    state, offset = {}, 0
    for entry in task["parameters"]:
        count = 1
        for size in entry["shape"]:
            count *= size
        state[entry["name"]] = floats[offset:offset + count].reshape(entry["shape"])
        offset += count
    assert offset == floats.numel(), "TASK.bin holds more weights than the parameters listed"
    model.load_state_dict({name: state[canonical(name)] for name in model.state_dict()})

    model.eval()
    with torch.no_grad():
        loss = model.loss(model(src, tgt_in, lens), tgt_out)
    # Which BLAS this torch was built with: Debian's python3-torch says "generic" (no MKL).
    blas = re.search(r"BLAS_INFO=(\w+)", torch.__config__.show())
    print(json.dumps({"loss": float(loss), "torch": torch.__version__, "blas": blas[1] if blas else "unknown"}), flush=True)

    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=task["lr"])

    def step():
        optimizer.zero_grad()
        loss = model.loss(model(src, tgt_in, lens), tgt_out)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), task["clip"])
        optimizer.step()

    for line in sys.stdin:
        reps = int(line)
        start = time.perf_counter()
        for _ in range(reps):
            step()
        print(json.dumps({"ms": (time.perf_counter() - start) * 1000 / reps}), flush=True)


if __name__ == "__main__":
    main()
