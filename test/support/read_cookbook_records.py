#!/usr/bin/env python3
"""Reads a `tokcap export --format tinker` directory as tinker-cookbook's own tools read a
training run, with the standard library only, holding every record to the facts of the
cookbook's writer (`rl/rollout_logging.py`, `serialize_rollout_summaries`): its keys, in its
order, with its types.

    python3 read_cookbook_records.py RUN_DIR

Facts checked:
- `config.json` is a training config: `model_name` (str) and `training_type` (str).
- `metrics.jsonl`: records `{"step": int, ...}`, every other key `/`-namespaced with a number.
- `iteration_NNNNNN/<split>_rollout_summaries.jsonl`: one object per trajectory whose first keys
  are exactly `schema_version` (int, 1), `split` (str, the file's split), `iteration` (int, the
  directory's), `group_idx` (int), `traj_idx` (int), `tags` (list of str), `sampling_client_step`
  (int or null), `total_reward` (float), `final_reward` (float), `trajectory_metrics` (str to int
  or float only), `steps` (list of `{step_idx, ob_len, ac_len, reward, episode_done, metrics,
  logs}`, metrics numbers only, logs str to str/int/float), `final_ob_len` (int); then the newer
  schema's `status` ("ok", or an error with `error_type` and `error_message`, both str). Keys after
  those are the exporter's own and are left alone, as the cookbook's reader leaves them.

Then does what a dashboard does with them: averages every trajectory metric over the records
(a string there would break it), sums rewards, counts statuses and error types, lists groups.
On success prints one JSON document on stdout and exits 0; on the first problem prints it on
stderr and exits 1.
"""
import json
import os
import re
import sys

# The helpers of the TrainingRunStore-style reader beside this file; no __pycache__ in the tree.
sys.dont_write_bytecode = True
from read_tinker import ITERATION_RE, Bad, is_int, is_number, need

SUMMARIES_RE = re.compile(r"(.+)_rollout_summaries\.jsonl")

WRITER_KEYS = [
    "schema_version", "split", "iteration", "group_idx", "traj_idx", "tags", "sampling_client_step",
    "total_reward", "final_reward", "trajectory_metrics", "steps", "final_ob_len",
]
STEP_KEYS = ["step_idx", "ob_len", "ac_len", "reward", "episode_done", "metrics", "logs"]


def read_jsonl(path):
    with open(path, "r", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def check_config(run_dir):
    with open(os.path.join(run_dir, "config.json"), "r", encoding="utf-8") as f:
        config = json.load(f)
    need(isinstance(config, dict), "config.json: not an object")
    need(isinstance(config.get("model_name"), str), "config.json: model_name is not a str")
    need(isinstance(config.get("training_type"), str), "config.json: training_type is not a str")
    return {"model_name": config["model_name"], "training_type": config["training_type"]}


def check_metrics(run_dir):
    records = read_jsonl(os.path.join(run_dir, "metrics.jsonl"))
    need(len(records) > 0, "metrics.jsonl: no record")
    for n, r in enumerate(records, 1):
        need(isinstance(r, dict) and is_int(r.get("step")), f"metrics.jsonl:{n}: no int step")
        for k, v in r.items():
            if k == "step":
                continue
            need("/" in k, f"metrics.jsonl:{n}: key {k!r} is not /-namespaced")
            need(is_number(v), f"metrics.jsonl:{n}: {k} is not a number")
    return records


def check_record(rec, split, iteration, where):
    need(isinstance(rec, dict), f"{where}: not an object")
    keys = list(rec.keys())
    need(keys[: len(WRITER_KEYS)] == WRITER_KEYS, f"{where}: keys {keys[:len(WRITER_KEYS)]}, expected {WRITER_KEYS}")
    need(is_int(rec["schema_version"]) and rec["schema_version"] == 1, f"{where}: schema_version")
    need(rec["split"] == split, f"{where}: split {rec['split']!r} in a {split} file")
    need(is_int(rec["iteration"]) and rec["iteration"] == iteration, f"{where}: iteration")
    need(is_int(rec["group_idx"]) and rec["group_idx"] >= 0, f"{where}: group_idx")
    need(is_int(rec["traj_idx"]) and rec["traj_idx"] >= 0, f"{where}: traj_idx")
    need(isinstance(rec["tags"], list) and all(isinstance(t, str) for t in rec["tags"]), f"{where}: tags")
    need(rec["sampling_client_step"] is None or is_int(rec["sampling_client_step"]), f"{where}: sampling_client_step")
    need(isinstance(rec["total_reward"], float), f"{where}: total_reward is not a float")
    need(isinstance(rec["final_reward"], float), f"{where}: final_reward is not a float")
    tm = rec["trajectory_metrics"]
    need(isinstance(tm, dict), f"{where}: trajectory_metrics")
    for k, v in tm.items():
        need(isinstance(k, str) and is_number(v), f"{where}: trajectory_metrics[{k!r}] = {v!r} is not an int or float")
    need(isinstance(rec["steps"], list), f"{where}: steps")
    for i, s in enumerate(rec["steps"]):
        need(isinstance(s, dict) and list(s.keys()) == STEP_KEYS, f"{where}: steps[{i}] keys {list(s.keys())}")
        need(is_int(s["step_idx"]) and s["step_idx"] == i, f"{where}: steps[{i}].step_idx")
        need(is_int(s["ob_len"]) and is_int(s["ac_len"]), f"{where}: steps[{i}] lengths")
        need(isinstance(s["reward"], float), f"{where}: steps[{i}].reward is not a float")
        need(isinstance(s["episode_done"], bool), f"{where}: steps[{i}].episode_done")
        need(isinstance(s["metrics"], dict) and all(is_number(v) for v in s["metrics"].values()), f"{where}: steps[{i}].metrics")
        logs = s["logs"]
        need(isinstance(logs, dict), f"{where}: steps[{i}].logs")
        for k, v in logs.items():
            need(isinstance(k, str) and (isinstance(v, str) or is_number(v)), f"{where}: steps[{i}].logs[{k!r}]")
    need(is_int(rec["final_ob_len"]), f"{where}: final_ob_len")
    # The newer schema: status right after the writer's keys; errors name their type and message.
    status = rec.get("status", "ok")
    if "status" in rec:
        need(keys[len(WRITER_KEYS)] == "status" and isinstance(status, str), f"{where}: status")
    if status != "ok":
        need(keys[len(WRITER_KEYS) + 1 : len(WRITER_KEYS) + 3] == ["error_type", "error_message"], f"{where}: error keys")
        need(isinstance(rec["error_type"], str) and isinstance(rec["error_message"], str), f"{where}: error fields")
    else:
        need("error_type" not in rec and "error_message" not in rec, f"{where}: error fields on an ok record")
    return status


def read_run(run_dir):
    config = check_config(run_dir)
    metrics = check_metrics(run_dir)
    records = []
    for name in sorted(os.listdir(run_dir)):
        m = ITERATION_RE.fullmatch(name)
        if not m:
            continue
        iteration = int(m.group(1))
        for fname in sorted(os.listdir(os.path.join(run_dir, name))):
            fm = SUMMARIES_RE.fullmatch(fname)
            if not fm:
                continue
            path = os.path.join(run_dir, name, fname)
            for n, rec in enumerate(read_jsonl(path), 1):
                status = check_record(rec, fm.group(1), iteration, f"{name}/{fname}:{n}")
                records.append((rec, status))
    # What a dashboard does: averages, sums, counts.
    sums = {}
    for rec, _ in records:
        for k, v in rec["trajectory_metrics"].items():
            sums[k] = sums.get(k, 0) + v
    means = {k: v / len(records) for k, v in sums.items()}
    statuses = {}
    error_types = {}
    for rec, status in records:
        statuses[status] = statuses.get(status, 0) + 1
        if status != "ok":
            error_types[rec["error_type"]] = error_types.get(rec["error_type"], 0) + 1
    groups = {}
    for rec, _ in records:
        groups.setdefault(rec["group_idx"], []).append((rec["traj_idx"], rec.get("rollout_id")))
    return {
        "config": config,
        "metric_keys": sorted({k for r in metrics for k in r}),
        "records": len(records),
        "reward_sum": sum(rec["total_reward"] for rec, _ in records),
        "metric_means": means,
        "statuses": statuses,
        "error_types": error_types,
        "groups": [[rid for _, rid in sorted(groups[g])] for g in sorted(groups)],
        "trajectories": [
            {
                "rollout_id": rec.get("rollout_id"),
                "status": status,
                "error_type": rec.get("error_type"),
                "error_message": rec.get("error_message"),
                "steps": [[s["ob_len"], s["ac_len"]] for s in rec["steps"]],
                "call_ids": [s["logs"].get("call_id") for s in rec["steps"]],
            }
            for rec, status in records
        ],
    }


def main(argv):
    if len(argv) != 2:
        print("usage: read_cookbook_records.py RUN_DIR", file=sys.stderr)
        return 2
    try:
        out = read_run(argv[1])
    except (Bad, OSError, ValueError, KeyError, TypeError, IndexError) as e:
        print(f"read_cookbook_records: {e}", file=sys.stderr)
        return 1
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
