"""PyTorch's side of the Seq2Seq training-step benchmark (scripts/bench/training/seq2seq.js):
d2l's GRU encoder-decoder with Bahdanau attention, built by the fixture script's classes
(scripts/fixtures/seq2seq.py, d2l's code written out), served by torch_server.py:

    /usr/bin/python3 scripts/bench/training/seq2seq_torch.py TASK.json TASK.bin [--threads N]
"""

from torch_server import serve  # puts scripts/fixtures on the path

from seq2seq import build, canonical  # noqa: E402  (d2l's classes)

if __name__ == "__main__":
    serve(build, canonical)
