"""PyTorch's side of the CausalLM benchmarks (scripts/bench/training/causal-lm.js): CPU,
float32, a set number of threads, the model as scripts/fixtures/causal_lm.py writes Hugging
Face's GPT-2 and Llama out (eager attention: an explicit causal mask and softmax, as HF's eager
path). A small server, so that the caller takes its samples in turns with ours:

    /usr/bin/python3 scripts/bench/training/causal_lm_torch.py TASK.json TASK.bin [--threads N]
        [--generate NEW]

TASK.json: {"config" (the fixture's snake_case keys), "batch", "steps" (T + 1), "lr", "betas",
"eps", "weight_decay", "clip", "parameters": [{name, shape}] in TASK.bin's order}; TASK.bin: int32
tokens [batch, steps], then the float32 weights. Prints {"loss", "torch", "blas", "threads"} (the
batch's loss at these weights), then per input line N: N AdamW steps as nanoGPT takes them
(zero_grad, forward, loss, backward, clip_grad_norm_, AdamW with decay on the tensors of 2 or more
dims) and {"ms": per step}.

With --generate NEW, TASK.bin's tokens are a prompt and the steps are greedy generations of NEW
tokens with a KV cache, as HF's generate() runs them (the prompt in one forward, then each new
token alone against the layers' cached keys and values, no autograd): it prints {"tokens"} (the
prompt and the new tokens, to check against ours) and the rest, then {"ms": per generation}.
"""

import argparse
import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "fixtures"))
from causal_lm import forward, greedy_with_cache, lm_loss, state_dict  # noqa: E402
from torch_server import answer_samples, blas  # noqa: E402


def read_task(json_path, bin_path):
    """(task, tokens [B, T + 1] int64, {name: float32 leaf tensor})."""
    task = json.loads(Path(json_path).read_text())
    raw = Path(bin_path).read_bytes()
    count = task["batch"] * task["steps"]
    tokens = torch.frombuffer(bytearray(raw[: 4 * count]), dtype=torch.int32).long()
    floats = torch.frombuffer(bytearray(raw[4 * count:]), dtype=torch.float32)
    params, offset = {}, 0
    for entry in task["parameters"]:
        size = 1
        for d in entry["shape"]:
            size *= d
        params[entry["name"]] = floats[offset:offset + size].reshape(entry["shape"]).clone()
        params[entry["name"]].requires_grad_()
        offset += size
    if offset != floats.numel():
        sys.exit(f"{bin_path} holds {floats.numel() - offset} more weights than {json_path} lists")
    return task, tokens.reshape(task["batch"], task["steps"]), params


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("task_json")
    parser.add_argument("task_bin")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--generate", type=int, metavar="NEW")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    task, tokens, params = read_task(args.task_json, args.task_bin)
    cfg = task["config"]
    about = {"torch": torch.__version__, "blas": blas(), "threads": torch.get_num_threads()}
    if args.generate is not None:
        sd = state_dict({name: p.detach() for name, p in params.items()}, cfg)
        generated = greedy_with_cache(sd, cfg, tokens, args.generate)
        print(json.dumps({"tokens": generated.flatten().tolist(), **about}), flush=True)
        answer_samples(lambda: greedy_with_cache(sd, cfg, tokens, args.generate))
        return

    def loss():
        logits, _ = forward(state_dict(params, cfg), cfg, tokens[:, :-1])
        return lm_loss(logits, tokens[:, 1:], cfg["pad"])

    with torch.no_grad():
        first = float(loss())
    print(json.dumps({"loss": first, **about}), flush=True)
    decay = [p for p in params.values() if p.dim() >= 2]
    rest = [p for p in params.values() if p.dim() < 2]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": task["weight_decay"]}, {"params": rest, "weight_decay": 0.0}],
        lr=task["lr"], betas=tuple(task["betas"]), eps=task["eps"])

    def step():
        optimizer.zero_grad()
        value = loss()
        value.backward()
        torch.nn.utils.clip_grad_norm_(list(params.values()), task["clip"])
        optimizer.step()

    answer_samples(step)


if __name__ == "__main__":
    main()
