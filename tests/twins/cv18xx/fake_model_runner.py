#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Stand-in for cviruntime's model_runner on a CV18xx board twin (no TPU here).

It takes model_runner's command line (-i in.npz -m x.cvimodel -o out.npz -c N -r ref.npz
-t cos,corr,euclid --enable-timer), prints what model_runner prints (the "Inputs:"/"Outputs:"
tables, "Performance result: …", "Pass/Error, [name] cosine:…", "Compare result: k/N passed.")
and exits 1 where it exits 1. Like the real runtime it refuses a cvimodel built for another
chip ("cvimodel built for X CANNOT run on platform Y"); PLATFORM below is set when the tests
build it.

It runs twin models: a real 48-byte cvimodel header followed by a JSON body
{"inputs": [...], "outputs": [...], "weight": w, "skew": s}, each tensor {"name", "shape"
(4 dims), "fmt" (model_runner's i8/u8/fp32), "qscale", "zero_point"}. Output j is
  resize(first input as int64, count) * weight + 3 * j + skew
wrapped into the output format (int8/uint8 two's complement, fp32 times 0.5); a nonzero "skew"
is a model whose results drift from its reference. tests/twins/boards_cv18xx.py recomputes this.
"""

import json
import os
import sys
import time

import numpy as np

PLATFORM = "@PLATFORM@"
DTYPES = {"fp32": np.float32, "i8": np.int8, "u8": np.uint8, "i16": np.int16, "bf16": np.uint16}


def fail(statement):
    print(statement)
    sys.exit(1)


def parse(argv):
    opts = {"-c": "1"}
    names = {
        "--input": "-i",
        "--model": "-m",
        "--output": "-o",
        "--count": "-c",
        "--reference": "-r",
        "--tolerances": "-t",
    }
    i = 0
    while i < len(argv):
        arg = names.get(argv[i], argv[i])
        if arg in ("-i", "-m", "-o", "-c", "-r", "-t", "-p", "-s", "-v"):
            opts[arg] = argv[i + 1]
            i += 2
        else:
            opts[arg] = True
            i += 1
    if "-m" not in opts:
        fail("model is required")
    return opts


def load_model(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) <= 48 or data[:8] != b"CviModel":
        fail("failed to register cvimodel")
    major, minor = data[12], data[13]
    chip = "cv183x" if (major, minor) == (1, 0) else data[30:46].split(b"\0")[0].decode()
    if chip != PLATFORM:
        sys.stderr.write(f"cvimodel built for {chip} CANNOT run on platform {PLATFORM}\n")
        fail("failed to register cvimodel")
    print(f"cvimodel's version:{major}.{minor}")
    return json.loads(data[48:].decode())


def show(model):
    print("Inputs:")
    for i, t in enumerate(model["inputs"]):
        n, c, h, w = t["shape"]
        print(
            f"  [{i}] {t['name']} <{n},{c},{h},{w}>,{t['fmt']}, qscale:{t['qscale']:f}, "
            f"zero_point: {t['zero_point']}"
        )
    print("Outputs:")
    for i, t in enumerate(model["outputs"]):
        n, c, h, w = t["shape"]
        print(f"  [{i}] {t['name']} <{n},{c},{h},{w}>,{t['fmt']}")


def load_inputs(path, model):
    arrays = []
    npz = np.load(path)
    if len(npz.files) != len(model["inputs"]):
        fail("input count differs from the model's")
    for t in model["inputs"]:
        key = next((k for k in npz.files if t["name"].startswith(k)), npz.files[0])
        a = npz[key]
        if a.dtype.kind == "f" and t["fmt"] in ("i8", "u8"):
            info = np.iinfo(DTYPES[t["fmt"]])
            a = np.clip(np.round(a * t["qscale"]) + t["zero_point"], info.min, info.max)
        arrays.append(a.astype(DTYPES[t["fmt"]]).reshape(-1))
    return arrays


def forward(model, arrays):
    outputs = {}
    first = arrays[0].astype(np.int64)
    for j, t in enumerate(model["outputs"]):
        count = int(np.prod(t["shape"]))
        raw = np.resize(first, count) * model["weight"] + 3 * j + model.get("skew", 0)
        if t["fmt"] == "fp32":
            out = raw.astype(np.float32) * 0.5
        else:
            out = (raw & 0xFF).astype(np.uint8).view(DTYPES[t["fmt"]])
        outputs[t["name"]] = out.reshape(t["shape"])
    return outputs


def similarity(a, b):
    a = a.astype(np.float64).ravel()
    b = b.astype(np.float64).ravel()
    norm = np.linalg.norm(a) * np.linalg.norm(b)
    cosine = float(a @ b / norm) if norm else 0.0
    ac, bc = a - a.mean(), b - b.mean()
    cnorm = np.linalg.norm(ac) * np.linalg.norm(bc)
    correlation = float(ac @ bc / cnorm) if cnorm else 0.0
    denom = np.linalg.norm((a + b) / 2)
    euclidean = float(1 - np.linalg.norm(a - b) / denom) if denom else 0.0
    return cosine, correlation, euclidean


def compare(outputs, ref_path, tolerances):
    ref = np.load(ref_path)
    errors = 0
    for name, out in outputs.items():
        if name not in ref.files:
            print(f"Warning, Cannot find {name} in reference")
            continue
        cos, corr, euc = similarity(out, ref[name])
        ok = cos >= tolerances[0] and corr >= tolerances[1] and euc >= tolerances[2]
        verdict = "Pass" if ok else "Error"
        errors += verdict == "Error"
        print(f"{verdict}, [{name}] cosine:{cos:f} correlation:{corr:f} euclidean:{euc:f}")
    print("Compare Failed." if errors else "Compare Pass.")
    return errors == 0


def main():
    opts = parse(sys.argv[1:])
    log = os.environ.get("FAKE_MODEL_RUNNER_LOG")
    if log:
        with open(log, "a") as f:
            f.write(" ".join(sys.argv[1:]) + "\n")
    model = load_model(opts["-m"])
    show(model)
    count = int(opts["-c"])
    tolerances = [0.99, 0.99, 0.90]
    if "-t" in opts:
        tolerances = [float(v) for v in opts["-t"].split(",")]
        cos, corr, euc = tolerances
        print(f"Tolerance, cosine:{cos:f}, correlation:{corr:f}, euclidean:{euc:f}")
    arrays = (
        load_inputs(opts["-i"], model)
        if "-i" in opts
        else [np.zeros(int(np.prod(t["shape"])), DTYPES[t["fmt"]]) for t in model["inputs"]]
    )
    err = 0
    start = time.perf_counter()
    failed = 0
    for _ in range(count):
        outputs = forward(model, arrays)
        if "-r" in opts and "--enable-timer" not in opts and not compare(outputs, opts["-r"], tolerances):
            failed += 1
    elapsed_ms = (time.perf_counter() - start) * 1000
    if "--enable-timer" in opts:
        per_run = elapsed_ms / count
        print(
            f"Performance result: {count} runs take {elapsed_ms} ms, each run takes {per_run:f} ms, "
            f"fps {1000 / per_run if per_run else 0:f}"
        )
    elif "-r" in opts:
        print(f"Compare result: {count - failed}/{count} passed.")
        err = 1 if failed else 0
    if "-o" in opts:
        np.savez(opts["-o"], **outputs)
    sys.exit(err)


if __name__ == "__main__":
    main()
