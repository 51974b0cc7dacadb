"""PyTorch's side of the Transformer training-step benchmark
(scripts/bench/training/transformer.js): d2l 11.7's Transformer, built by the fixture script's classes (scripts/fixtures/transformer.py,
d2l's code written out; its state-dict names are ours), served by torch_server.py:

    /usr/bin/python3 scripts/bench/training/transformer_torch.py TASK.json TASK.bin [--threads N]
"""

from torch_server import serve  # puts scripts/fixtures on the path

from transformer import build  # noqa: E402  (d2l's classes)

if __name__ == "__main__":
    serve(build)
