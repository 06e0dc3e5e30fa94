#!/usr/bin/env python3
"""Opens a `tokcap export --format tinker` directory the way tinker-cookbook's TrainingRunStore
reads a training run, with the standard library only, and checks the fields.

    python3 read_tinker.py RUN_DIR

Reads config.json, metrics.jsonl, lists the iterations by the regex `iteration_(\\d+)` and reads
each iteration's train_rollout_summaries.jsonl. On success prints one JSON document on stdout
(what was read, for the caller to compare with tokcap's own build results) and exits 0; on the
first problem prints it on stderr and exits 1.
"""
import json
import os
import re
import sys

ITERATION_RE = re.compile(r"iteration_(\d+)")


class Bad(Exception):
    pass


def need(cond, msg):
    if not cond:
        raise Bad(msg)


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_float(v):
    return isinstance(v, float)


def is_number(v):
    return (isinstance(v, (int, float))) and not isinstance(v, bool)


def read_jsonl(path):
    records = []
    with open(path, "r", encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            need(line.endswith("\n"), f"{path}:{n}: no final newline")
            text = line[:-1]
            need(text.strip() != "", f"{path}:{n}: blank line")
            obj = json.loads(text)
            need(isinstance(obj, dict), f"{path}:{n}: not an object")
            # One compact object per line.
            need(
                json.dumps(obj, separators=(",", ":"), ensure_ascii=False) == text,
                f"{path}:{n}: not one compact JSON object",
            )
            records.append(obj)
    return records


def check_config(run_dir):
    path = os.path.join(run_dir, "config.json")
    with open(path, "r", encoding="utf-8") as f:
        text = f.read()
    config = json.loads(text)
    need(isinstance(config, dict), "config.json: not an object")
    # Written with a 2-space indent, as json.dump(config, f, indent=2) would.
    need(
        text == json.dumps(config, indent=2, ensure_ascii=False) + "\n",
        "config.json: not in the 2-space indent layout",
    )
    for key in ("model_name", "exporter", "tokcap_version", "format", "created_at", "source", "rollouts", "exported"):
        need(key in config, f"config.json: missing {key}")
    need(config["exporter"] == "tokcap", "config.json: exporter is not tokcap")
    need(config["format"] == "tinker", "config.json: format is not tinker")
    need(re.fullmatch(r"\d+\.\d+\.\d+.*", config["tokcap_version"]) is not None, "config.json: bad tokcap_version")
    need(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", config["created_at"]) is not None, "config.json: bad created_at")
    source = config["source"]
    need(isinstance(source, dict) and isinstance(source.get("capture_dir"), str), "config.json: source.capture_dir")
    need(source.get("selection") in ("all", "ids"), "config.json: source.selection")
    need(isinstance(source.get("freeze"), bool), "config.json: source.freeze")
    return config


def check_metrics(run_dir):
    records = read_jsonl(os.path.join(run_dir, "metrics.jsonl"))
    need(len(records) == 1, f"metrics.jsonl: {len(records)} records, expected 1")
    r = records[0]
    need(list(r.keys())[0] == "step" and is_int(r["step"]), "metrics.jsonl: step first, an int")
    need(all(k.startswith("tokcap/") for k in list(r.keys())[1:]), "metrics.jsonl: keys not in tokcap/")
    m = {k[len("tokcap/"):]: v for k, v in r.items() if k != "step"}
    for key in ("rollouts", "exported", "trainable", "masked", "failed_builds",
                "generated_tokens_captured", "generated_tokens_delivered"):
        need(is_int(m.get(key)), f"metrics.jsonl: tokcap/{key} is not an int")
    for key in ("masked_fraction", "delivered_fraction"):
        need(is_float(m.get(key)) and 0.0 <= m[key] <= 1.0, f"metrics.jsonl: tokcap/{key} is not a fraction")
    need(m["trainable"] + m["masked"] == m["rollouts"], "metrics.jsonl: trainable + masked != rollouts")
    need(m["generated_tokens_delivered"] <= m["generated_tokens_captured"], "metrics.jsonl: delivered > captured")
    return [dict(step=r["step"], **m)]


def check_summary(rec, where):
    keys = ["schema_version", "split", "iteration", "group_idx", "traj_idx", "tags", "sampling_client_step",
            "total_reward", "final_reward", "trajectory_metrics", "steps", "final_ob_len", "status"]
    need(list(rec.keys())[:len(keys)] == keys, f"{where}: keys {list(rec.keys())}")
    need(is_int(rec["group_idx"]) and rec["group_idx"] >= 0, f"{where}: group_idx")
    need(is_int(rec["traj_idx"]) and rec["traj_idx"] >= 0, f"{where}: traj_idx")
    need(is_float(rec["total_reward"]) and rec["total_reward"] == 0.0, f"{where}: total_reward")
    need(is_float(rec["final_reward"]) and rec["final_reward"] == 0.0, f"{where}: final_reward")
    need(is_int(rec["final_ob_len"]) and rec["final_ob_len"] >= 0, f"{where}: final_ob_len")
    need(rec.get("reward_source") == "not captured", f"{where}: reward_source")
    need(isinstance(rec.get("rollout_id"), str), f"{where}: rollout_id")
    tm = rec["trajectory_metrics"]
    need(isinstance(tm, dict), f"{where}: trajectory_metrics")
    for k, v in tm.items():
        need(is_number(v), f"{where}: trajectory_metrics.{k} is not a number")
    steps = rec["steps"]
    need(isinstance(steps, list), f"{where}: steps")
    step_keys = ["step_idx", "ob_len", "ac_len", "reward", "episode_done", "metrics", "logs"]
    for i, s in enumerate(steps):
        need(isinstance(s, dict) and list(s.keys()) == step_keys, f"{where}: step {i} keys")
        need(s["step_idx"] == i, f"{where}: step {i} step_idx")
        need(is_int(s["ob_len"]) and s["ob_len"] >= 0, f"{where}: step {i} ob_len")
        need(is_int(s["ac_len"]) and s["ac_len"] >= 0, f"{where}: step {i} ac_len")
        need(is_float(s["reward"]) and s["reward"] == 0.0, f"{where}: step {i} reward")
        need(s["episode_done"] is (i == len(steps) - 1), f"{where}: step {i} episode_done")
        need(isinstance(s["metrics"], dict), f"{where}: step {i} metrics")
        need(isinstance(s["logs"], dict) and isinstance(s["logs"].get("call_id"), str), f"{where}: step {i} logs")
        if i > 0:
            prev = steps[i - 1]
            # Each observation extends the previous observation and action.
            need(s["ob_len"] >= prev["ob_len"] + prev["ac_len"], f"{where}: step {i} ob_len does not grow")
    return {
        "rollout_id": rec["rollout_id"],
        "group_idx": rec["group_idx"],
        "traj_idx": rec["traj_idx"],
        "masked": tm.get("masked"),
        "steps": [[s["ob_len"], s["ac_len"], s["logs"]["call_id"]] for s in steps],
    }


def read_run(run_dir):
    config = check_config(run_dir)
    metrics = check_metrics(run_dir)
    iterations = sorted(
        int(m.group(1))
        for name in os.listdir(run_dir)
        if (m := ITERATION_RE.fullmatch(name)) and os.path.isdir(os.path.join(run_dir, name))
    )
    need(iterations == [0], f"iterations {iterations}, expected [0]")
    rollouts = []
    for it in iterations:
        name = "iteration_%06d" % it
        need(os.path.isdir(os.path.join(run_dir, name)), f"{name}: not the iteration_%06d name")
        path = os.path.join(run_dir, name, "train_rollout_summaries.jsonl")
        for n, rec in enumerate(read_jsonl(path), 1):
            rollouts.append(check_summary(rec, f"{name}/train_rollout_summaries.jsonl:{n}"))
    need(len(rollouts) == config["exported"] == metrics[0]["exported"], "record count differs from config/metrics")
    pairs = [(r["group_idx"], r["traj_idx"]) for r in rollouts]
    need(len(set(pairs)) == len(pairs), "duplicate (group_idx, traj_idx)")
    groups = sorted({g for g, _ in pairs})
    need(groups == list(range(len(groups))), "group_idx not dense from 0")
    for g in groups:
        trajs = sorted(t for gg, t in pairs if gg == g)
        need(trajs == list(range(len(trajs))), f"group {g}: traj_idx not dense from 0")
    return {"config": config, "metrics": metrics, "iterations": iterations, "rollouts": rollouts}


def main(argv):
    if len(argv) != 2:
        print("usage: read_tinker.py RUN_DIR", file=sys.stderr)
        return 2
    try:
        out = read_run(argv[1])
    except (Bad, OSError, ValueError, KeyError, TypeError) as e:
        print(f"read_tinker: {e}", file=sys.stderr)
        return 1
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
