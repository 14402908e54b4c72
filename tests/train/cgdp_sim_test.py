#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""toru-cgdp-sim end to end: its JSON fields, the speedups and weak scaling against the published
table in docs/train.md ("The published results on paper"), parameter counts against torchvision's
published sizes, and bad input refused with exit status 2.

Usage: cgdp_sim_test.py TORU_CGDP_SIM"""
import json
import subprocess
import sys

exe = sys.argv[1]
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def run(*args):
    p = subprocess.run([exe, *args], capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


rc, out, err = run("--json")
check(rc == 0, f"--json: exit {rc}: {err}")
doc = json.loads(out)
check(doc["type"] == "cgdp_simulation" and doc["gpus"] == 4, f"header: {doc.get('type')} {doc.get('gpus')}")
rows = {(r["model"], r["link"]): r for r in doc["rows"]}
check(len(doc["rows"]) == 8 and len(rows) == 8, f"rows: {sorted(rows)}")
fields = {"model", "link", "batch_per_gpu", "layers", "parameter_bytes", "allreduce_s", "cgdp_s", "chunk_layers",
          "tail_s", "speedup", "weak_scaling_allreduce", "weak_scaling_cgdp"}
for key, r in rows.items():
    check(set(r) == fields, f"{key}: fields {sorted(set(r) ^ fields)} differ")
    # The speedup is the ratio of the two step times it reports; CGDP's tail is part of its step.
    check(abs(r["speedup"] - r["allreduce_s"] / r["cgdp_s"]) < 1e-9 * r["speedup"], f"{key}: speedup ratio")
    check(0 < r["tail_s"] < r["cgdp_s"], f"{key}: tail {r['tail_s']} within the step {r['cgdp_s']}")
    check(1 <= r["chunk_layers"] <= r["layers"], f"{key}: chunk_layers {r['chunk_layers']} of {r['layers']}")

# docs/train.md's table (two decimals; weak scaling in whole percent, pcie3).
published = {
    "alexnet": (1.40, 1.23, 73),
    "googlenet": (1.04, 1.02, 97),
    "vgg16": (1.17, 1.10, 86),
    "resnet152": (1.09, 1.05, 92),
}
batches = {"alexnet": 128, "googlenet": 64, "vgg16": 32, "resnet152": 32}
for model, (pcie, nvlink, weak) in published.items():
    p, n = rows[(model, "pcie3")], rows[(model, "nvlink2")]
    check(abs(p["speedup"] - pcie) <= 0.005 + 1e-9, f"{model} pcie3 speedup {p['speedup']:.4f}, table {pcie}")
    check(abs(n["speedup"] - nvlink) <= 0.005 + 1e-9, f"{model} nvlink2 speedup {n['speedup']:.4f}, table {nvlink}")
    check(abs(100 * p["weak_scaling_allreduce"] - weak) <= 0.5 + 1e-9,
          f"{model} weak scaling {100 * p['weak_scaling_allreduce']:.2f} %, table {weak} %")
    check(abs(p["weak_scaling_cgdp"] - 1) <= 0.005, f"{model} CGDP weak scaling {p['weak_scaling_cgdp']}")
    check(p["batch_per_gpu"] == batches[model], f"{model} batch {p['batch_per_gpu']}")

# fp32 weights of the networks, 4 bytes per parameter as torchvision counts them (AlexNet, VGG-16 and
# ResNet-152 in torchvision's model documentation).
params = {"alexnet": 61100840, "vgg16": 138357544, "resnet152": 60192808}
for model, count in params.items():
    got = rows[(model, "pcie3")]["parameter_bytes"]
    check(got == 4 * count, f"{model}: {got} parameter bytes, torchvision has {4 * count}")

# The overlapped baseline's column of the table.
rc, out, err = run("--json", "--overlapped-baseline", "--link", "pcie3")
check(rc == 0, f"--overlapped-baseline: exit {rc}: {err}")
overlapped = {r["model"]: r["speedup"] for r in json.loads(out)["rows"]}
for model, want in {"alexnet": 1.03, "googlenet": 1.03, "vgg16": 1.01, "resnet152": 1.01}.items():
    check(abs(overlapped[model] - want) <= 0.005 + 1e-9, f"{model} overlapped {overlapped[model]:.4f}, table {want}")

for bad, message in [(["--link", "infiniband"], "--link"), (["--gpus", "0"], "--gpus"),
                     (["--model", "nosuchnet"], "nosuchnet")]:
    rc, out, err = run(*bad)
    check(rc == 2, f"{bad}: exit {rc}, expected 2")
    check(message in err, f"{bad}: stderr does not name {message}: {err.strip()}")
    check(out.strip() == "" or "model" in out, f"{bad}: stdout {out[:200]}")

if failures:
    print("\n".join("FAIL: " + f for f in failures), file=sys.stderr)
    sys.exit(1)
print("ok: toru-cgdp-sim")
