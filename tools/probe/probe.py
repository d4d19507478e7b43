#!/usr/bin/env python3
"""gpumem probe: run a gpumem scenario on one real GPU with random weights and write measurement
records that `gpumem calibrate` reads (tools/probe/README.md).

  probe.py --scenario run.json [--gpumem PATH] [--steps 3] [--out record.jsonl] [--id ID] [--source TEXT]
  probe.py --check-counts [--gpumem PATH]     # CPU only: transformers' parameter counts vs gpumem's
  probe.py --selftest [--scenario run.json]   # records from fake peaks, no torch needed

Exit codes: 0 ok (or "skipped: ..." on the first line), 1 a failure (a count mismatch, a run that
failed), 2 cannot run here (no CUDA device, a missing package, an unsupported scenario field).
Only the standard library is imported at the top: torch, transformers, peft and bitsandbytes are
imported where they are needed, so --help and --selftest work without them.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any, Callable, Optional

GIB = 2 ** 30
HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
METRICS = ("allocated", "reserved", "device_total")


class Refusal(Exception):
    """The probe cannot run this here: exit 2 with the message (what to install, which field)."""


# ---------------------------------------------------------------------------------------------
# gpumem CLI
# ---------------------------------------------------------------------------------------------

def find_gpumem(explicit: Optional[str]) -> str:
    """--gpumem, else $GPUMEM_CLI, else this checkout's build, else `gpumem` on PATH."""
    for cand in (explicit, os.environ.get("GPUMEM_CLI"), str(REPO / "build/native/core/cli/gpumem")):
        if cand and Path(cand).is_file() and os.access(cand, os.X_OK):
            return cand
    found = shutil.which("gpumem")
    if found:
        return found
    raise Refusal("gpumem CLI not found: pass --gpumem PATH or set GPUMEM_CLI "
                  "(build it with ./make.sh; the binary is build/native/core/cli/gpumem)")


def run_gpumem(cli: str, args: list[str], stdin: Optional[str] = None) -> dict:
    out = subprocess.run([cli, *args], input=stdin, capture_output=True, text=True)
    try:
        doc = json.loads(out.stdout)
    except json.JSONDecodeError:
        raise Refusal(f"gpumem {' '.join(args)} failed (exit {out.returncode}): {out.stderr.strip() or out.stdout.strip()}")
    if doc.get("ok") is False:
        msgs = "; ".join(e.get("message", str(e)) for e in doc.get("errors", [])) or json.dumps(doc)
        raise Refusal(f"gpumem rejects the scenario: {msgs}")
    return doc


def gpumem_version(cli: str) -> str:
    out = subprocess.run([cli, "version"], capture_output=True, text=True)
    return out.stdout.strip()


# ---------------------------------------------------------------------------------------------
# The scenario: resolved by gpumem, checked against what one process on one GPU can run
# ---------------------------------------------------------------------------------------------

def resolve(cli: str, scenario: dict) -> dict:
    """`gpumem estimate --scenario - --json`: the estimate, whose "scenario" has every default applied."""
    return run_gpumem(cli, ["estimate", "--scenario", "-", "--json"], json.dumps(scenario))


def unsupported(s: dict) -> list[str]:
    """The fields of a resolved scenario that the probe (v1: one process, one GPU, transformers)
    cannot reproduce, each named with its value."""
    bad: list[str] = []

    def want(field: str, value: Any, allowed: tuple) -> None:
        if value not in allowed:
            bad.append(f"{field} = {json.dumps(value)} (the probe runs {', '.join(map(str, allowed))})")

    par = s.get("parallelism", {})
    for k in ("data_parallel_size", "tensor_parallel_size", "pipeline_parallel_size",
              "expert_parallel_size", "context_parallel_size"):
        want(f"parallelism.{k}", par.get(k, 1), (1,))
    want("parallelism.sequence_parallel", par.get("sequence_parallel", False), (False,))
    want("hardware.num_gpus", s.get("hardware", {}).get("num_gpus", 1), (1,))
    want("engine.type", s.get("engine", {}).get("type", "none"), ("none",))
    if s.get("mode") == "inference":
        inf = s.get("inference", {})
        want("inference.engine", inf.get("engine"), ("transformers",))
        want("inference.weight_format", inf.get("weight_format"), ("fp32", "fp16", "bf16", "int8", "nf4", "fp4"))
        want("inference.attention", inf.get("attention"), ("eager", "sdpa", "flash"))
        dtype = inf.get("weight_format") if inf.get("weight_format") in ("fp32", "fp16", "bf16") else None
        if inf.get("kv_cache", True) and dtype is not None:
            want("inference.kv_cache_dtype", inf.get("kv_cache_dtype"), (dtype,))
    else:
        tr = s.get("training", {})
        want("training.framework", tr.get("framework"), ("transformers",))
        want("training.method", tr.get("method"), ("full", "lora", "qlora"))
        want("training.dtype", tr.get("dtype"), ("fp32", "fp16", "bf16"))
        want("training.precision", tr.get("precision"), ("amp_fp32_weights", "pure"))
        want("training.optimizer", tr.get("optimizer"), tuple(OPTIMIZERS))
        want("training.optimizer_in_backward", tr.get("optimizer_in_backward", False), (False,))
        want("training.activation_checkpointing", tr.get("activation_checkpointing"), ("none", "full"))
        want("training.activation_offloading", tr.get("activation_offloading", False), (False,))
        want("training.attention", tr.get("attention"), ("eager", "sdpa", "flash"))
        want("training.compile", tr.get("compile", "none"), ("none",))
        want("training.loss", tr.get("loss"), ("standard",))
        want("training.untie_embeddings", tr.get("untie_embeddings", False), (False,))
        if tr.get("optimizer") in OPTIMIZERS and tr.get("optimizer") not in BNB_STATES and "optimizer_state_dtype" in tr:
            # torch.optim keeps its states in the parameters' dtype
            weights = "fp32" if tr.get("precision") == "amp_fp32_weights" or tr.get("method") != "full" else tr.get("dtype")
            want("training.optimizer_state_dtype", tr["optimizer_state_dtype"], (weights,))
        if tr.get("method") == "qlora":
            want("training.quantization", tr.get("quantization"), ("nf4", "fp4", "int8"))
    return bad


# ---------------------------------------------------------------------------------------------
# config.json of the scenario's model
# ---------------------------------------------------------------------------------------------

def preset_record(model_id: str) -> Optional[dict]:
    """This checkout's preset record (presets/models/OWNER__NAME.json: {"model_id", "config", ...})."""
    folder = REPO / "presets" / "models"
    want = model_id.replace("/", "__").lower() + ".json"
    if folder.is_dir():
        for path in folder.iterdir():  # ids match case-insensitively, as gpumem's do
            if path.name.lower() == want:
                return json.loads(path.read_text())
    return None


def model_config_dict(resolved_scenario: dict) -> tuple[dict, str]:
    """The model's config.json as a dict, and where it came from. The CLI gives no preset's
    config.json, so: model.hf_config, else the bundled preset record in this checkout, else
    transformers.AutoConfig.from_pretrained(id) (the Hub, or its local cache)."""
    model = resolved_scenario.get("model", {})
    if isinstance(model.get("hf_config"), dict):
        return model["hf_config"], "scenario model.hf_config"
    # the resolved model's name is the preset's canonical id (an alias or a twin stays in "preset")
    ids = [i for i in (model.get("name"), model.get("preset")) if isinstance(i, str) and i]
    if not ids:
        raise Refusal("the scenario's model has no hf_config, preset or Hub id: the probe builds the model from a config.json")
    for model_id in ids:
        rec = preset_record(model_id)
        if rec and isinstance(rec.get("config"), dict):
            return rec["config"], f"preset {rec.get('model_id', model_id)} (presets/models)"
    model_id = model.get("preset") or ids[0]
    transformers = need("transformers")
    cfg = transformers.AutoConfig.from_pretrained(model_id)  # the Hub's config.json, or the local cache
    return cfg.to_dict(), f"transformers.AutoConfig.from_pretrained({model_id!r})"


# ---------------------------------------------------------------------------------------------
# Imports that may be missing
# ---------------------------------------------------------------------------------------------

INSTALL = {
    "torch": "PyTorch with CUDA (pip install torch)",
    "transformers": "pip install transformers",
    "peft": "pip install peft (LoRA and QLoRA)",
    "bitsandbytes": "pip install bitsandbytes (QLoRA, 8-bit and paged optimizers, int8/nf4/fp4 weights)",
    "accelerate": "pip install accelerate",
}


def need(name: str, why: str = "") -> Any:
    try:
        return importlib.import_module(name)
    except ImportError as e:
        raise Refusal(f"{name} is not installed{' (' + why + ')' if why else ''}: {INSTALL.get(name, 'pip install ' + name)} [{e}]")


def missing(names: tuple[str, ...]) -> list[str]:
    out = []
    for n in names:
        try:
            importlib.import_module(n)
        except ImportError:
            out.append(n)
    return out


# ---------------------------------------------------------------------------------------------
# Building the model
# ---------------------------------------------------------------------------------------------

def torch_dtype(torch: Any, name: str) -> Any:
    return {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[name]


def attn_impl(name: str) -> str:
    # transformers' attn_implementation values (PreTrainedModel._check_and_adjust_attn_implementation)
    return {"eager": "eager", "sdpa": "sdpa", "flash": "flash_attention_2"}[name]


def auto_config(transformers: Any, cfg: dict) -> Any:
    """transformers.AutoConfig.for_model(model_type, **config.json)."""
    cfg = dict(cfg)
    model_type = cfg.pop("model_type", None)
    if not model_type:
        raise Refusal("config.json has no model_type: transformers cannot build it")
    return transformers.AutoConfig.for_model(model_type, **cfg)


def model_class(transformers: Any, cfg: dict) -> Any:
    """config.json's architectures[0] when transformers has that class (vision-language and
    encoder models get their own head), else AutoModelForCausalLM."""
    for arch in cfg.get("architectures") or []:
        cls = getattr(transformers, arch, None)
        if cls is not None:
            return cls
    return transformers.AutoModelForCausalLM


def build_random(transformers: Any, torch: Any, cfg: dict, dtype: Any, attention: str) -> Any:
    """Random weights on the GPU: PreTrainedModel._from_config (what AutoModel*.from_config calls)
    with torch_dtype and attn_implementation, then .to('cuda')."""
    config = auto_config(transformers, cfg)
    cls = model_class(transformers, cfg)
    kwargs = {"torch_dtype": dtype, "attn_implementation": attn_impl(attention)}
    if hasattr(torch.device("cuda"), "__enter__"):  # torch >= 2.0: initialise on the GPU, no host copy
        with torch.device("cuda"):
            return from_config(transformers, cls, config, **kwargs)
    return from_config(transformers, cls, config, **kwargs).to("cuda")


def from_config(transformers: Any, cls: Any, config: Any, **kwargs: Any) -> Any:
    """AutoModelForCausalLM.from_config, or a concrete class's PreTrainedModel._from_config."""
    if cls is transformers.AutoModelForCausalLM:
        return cls.from_config(config, **kwargs)
    return cls._from_config(config, **kwargs)


def build_quantized(transformers: Any, torch: Any, cfg: dict, quant: str, compute: Any, attention: str) -> Any:
    """bitsandbytes weights: random weights saved to a temporary folder (save_pretrained), then
    from_pretrained(..., quantization_config=BitsAndBytesConfig(...)), the path QLoRA runs take.
    The folder holds the whole model in the compute dtype while it exists."""
    need("bitsandbytes", "quantized weights")
    need("accelerate", "from_pretrained with a quantization_config")
    config = auto_config(transformers, cfg)
    cls = model_class(transformers, cfg)
    if quant == "int8":
        qc = transformers.BitsAndBytesConfig(load_in_8bit=True)
    else:
        qc = transformers.BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type=quant,
                                             bnb_4bit_compute_dtype=compute, bnb_4bit_use_double_quant=True)
    with tempfile.TemporaryDirectory(prefix="gpumem-probe-") as tmp:
        from_config(transformers, cls, config, torch_dtype=compute).save_pretrained(tmp)
        return cls.from_pretrained(tmp, quantization_config=qc, torch_dtype=compute,
                                   attn_implementation=attn_impl(attention), device_map={"": 0})


# The optimizers the probe runs: scenario name -> (module, constructor) given params and lr.
def _torch_opt(name: str, **kw: Any) -> Callable:
    return lambda torch, params: getattr(torch.optim, name)(params, lr=1e-5, **kw)


def _bnb_opt(name: str) -> Callable:
    return lambda torch, params: getattr(need("bitsandbytes", "8-bit and paged optimizers").optim, name)(params, lr=1e-5)


OPTIMIZERS: dict[str, Callable] = {
    "adamw": _torch_opt("AdamW"),                 # torch picks the foreach implementation on CUDA
    "adamw_fused": _torch_opt("AdamW", fused=True),
    "adam": _torch_opt("Adam"),
    "sgd": _torch_opt("SGD"),
    "sgd_momentum": _torch_opt("SGD", momentum=0.9),
    "nesterov": _torch_opt("SGD", momentum=0.9, nesterov=True),
    "adagrad": _torch_opt("Adagrad"),
    "rmsprop": _torch_opt("RMSprop"),
    "nadam": _torch_opt("NAdam"),
    "radam": _torch_opt("RAdam"),
    "amsgrad": _torch_opt("AdamW", amsgrad=True),
    "adafactor": lambda torch, params: need("transformers").optimization.Adafactor(
        params, lr=1e-5, scale_parameter=False, relative_step=False),
    "adamw_8bit": _bnb_opt("AdamW8bit"),
    "paged_adamw_8bit": _bnb_opt("PagedAdamW8bit"),
    "paged_adamw_32bit": _bnb_opt("PagedAdamW32bit"),
    "lion": _bnb_opt("Lion"),
}


BNB_STATES = ("adamw_8bit", "paged_adamw_8bit", "paged_adamw_32bit", "lion")


def lora_targets(targets: list[str]) -> Any:
    # peft.LoraConfig accepts "all-linear" for every linear layer but the output head
    return "all-linear" if "all_linear" in targets else list(targets)


# ---------------------------------------------------------------------------------------------
# Measuring
# ---------------------------------------------------------------------------------------------

class Peaks:
    """torch.cuda.max_memory_allocated / max_memory_reserved since reset_peak_memory_stats, and
    the device's used memory (torch.cuda.mem_get_info: total - free), sampled after each step.
    The caching allocator only returns memory on empty_cache, so total - free after a step is the
    step's high-water mark unless another process on the card moved meanwhile."""

    def __init__(self, torch: Any) -> None:
        self.torch = torch
        self.device_total = 0
        self.per_step: list[dict] = []
        torch.cuda.reset_peak_memory_stats()

    def sample(self, label: str) -> None:
        t = self.torch
        t.cuda.synchronize()
        free, total = t.cuda.mem_get_info()
        self.device_total = max(self.device_total, total - free)
        self.per_step.append({"after": label, "allocated_gib": t.cuda.max_memory_allocated() / GIB,
                              "reserved_gib": t.cuda.max_memory_reserved() / GIB,
                              "device_total_gib": (total - free) / GIB})

    def result(self) -> dict:
        t = self.torch
        return {"allocated": t.cuda.max_memory_allocated() / GIB,
                "reserved": t.cuda.max_memory_reserved() / GIB,
                "device_total": self.device_total / GIB}


def run_training(torch: Any, transformers: Any, cfg: dict, tr: dict, steps: int) -> tuple[dict, list]:
    dtype = torch_dtype(torch, tr["dtype"])
    method = tr["method"]
    if method in ("lora", "qlora"):
        need("peft", f"training.method = {method}")
    if method == "qlora":
        model = build_quantized(transformers, torch, cfg, tr.get("quantization", "nf4"), dtype, tr["attention"])
    else:
        # amp_fp32_weights: fp32 weights, torch.autocast to the compute dtype; pure: weights in dtype
        weights = torch.float32 if tr["precision"] == "amp_fp32_weights" else dtype
        model = build_random(transformers, torch, cfg, weights, tr["attention"])
    if tr["activation_checkpointing"] == "full":
        model.gradient_checkpointing_enable()  # transformers.PreTrainedModel.gradient_checkpointing_enable
        if method in ("lora", "qlora"):
            model.enable_input_require_grads()  # frozen embeddings: checkpointed blocks still need grads
    if method in ("lora", "qlora"):
        peft = importlib.import_module("peft")
        lora = tr.get("lora", {})
        model = peft.get_peft_model(model, peft.LoraConfig(
            r=int(lora.get("rank", 8)), lora_alpha=float(lora.get("alpha", 16)), lora_dropout=0.0,
            target_modules=lora_targets(lora.get("target_modules", ["q_proj", "v_proj"])), task_type="CAUSAL_LM"))
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = OPTIMIZERS[tr["optimizer"]](torch, params)
    b, n, accum = int(tr["batch_size"]), int(tr["seq_len"]), int(tr.get("gradient_accumulation_steps", 1))
    vocab = int(cfg.get("vocab_size") or cfg.get("text_config", {}).get("vocab_size"))
    autocast = tr["precision"] == "amp_fp32_weights" and dtype != torch.float32
    peaks = Peaks(torch)
    for step in range(steps):
        for _ in range(accum):
            ids = torch.randint(0, vocab, (b, n), device="cuda")
            with torch.autocast("cuda", dtype=dtype, enabled=autocast):
                loss = model(input_ids=ids, labels=ids).loss  # transformers' standard shifted cross-entropy
            (loss / accum).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        peaks.sample(f"step {step + 1}")
    return peaks.result(), peaks.per_step


def run_inference(torch: Any, transformers: Any, cfg: dict, inf: dict, new_tokens: int) -> tuple[dict, list]:
    fmt = inf["weight_format"]
    if fmt in ("int8", "nf4", "fp4"):
        model = build_quantized(transformers, torch, cfg, fmt, torch.bfloat16, inf["attention"])
    else:
        model = build_random(transformers, torch, cfg, torch_dtype(torch, fmt), inf["attention"])
    model.eval()
    b, ctx = int(inf["batch_size"]), int(inf["context_len"])
    gen = max(1, min(new_tokens, ctx - 1))
    vocab = int(cfg.get("vocab_size") or cfg.get("text_config", {}).get("vocab_size"))
    peaks = Peaks(torch)
    ids = torch.randint(0, vocab, (b, ctx - gen), device="cuda")
    with torch.no_grad():
        # prefill ctx - gen tokens, then decode to the context (gpumem bounds the prefill by the whole
        # context); min_new_tokens keeps random weights from stopping early at an eos token
        model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=gen,
                       min_new_tokens=gen, do_sample=False, use_cache=bool(inf.get("kv_cache", True)),
                       pad_token_id=0)
    peaks.sample("generate")
    return peaks.result(), peaks.per_step


# ---------------------------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------------------------

def record_scenario(given: dict, resolved: dict, device_total_gib: Optional[float]) -> dict:
    """The scenario a record carries: gpumem's resolved one (every default pinned), less the
    overheads the scenario did not give (a record that gives an overhead keeps it, so calibrate
    would fit nothing), with the card that ran it."""
    s = json.loads(json.dumps(resolved))
    given_over = given.get("overheads") or {}
    if "overheads" in s:
        kept = {k: v for k, v in s["overheads"].items() if k in given_over}
        if kept:
            s["overheads"] = kept
        else:
            del s["overheads"]
    if device_total_gib:
        s["hardware"] = {"num_gpus": 1, "gpu_memory_gb": device_total_gib}
    return s


def make_records(scenario: dict, peaks: dict, env: dict, rec_id: str, source: str,
                 estimate: Optional[dict] = None, detail: Optional[dict] = None) -> list[dict]:
    """One calibrate record per measured metric: {"id": ID-METRIC, "source", "scenario",
    "measured": {"metric", "gib"}, "environment", ...}. Pure: no torch, no I/O."""
    out = []
    for metric in METRICS:
        if peaks.get(metric) is None:
            continue
        rec: dict = {"id": f"{rec_id}-{metric}", "source": source, "scenario": scenario,
                     "measured": {"metric": metric, "gib": round(float(peaks[metric]), 4)},
                     "environment": env}
        if estimate and estimate.get(metric) is not None:
            rec["gpumem_estimate_gib"] = round(float(estimate[metric]), 4)
        if detail:
            rec["probe"] = detail
        out.append(rec)
    return out


def estimate_gib(est: dict) -> dict:
    g = est.get("per_gpu", {})
    return {"allocated": g.get("peak_allocated_bytes", 0) / GIB, "reserved": g.get("peak_reserved_bytes", 0) / GIB,
            "device_total": g.get("device_total_bytes", 0) / GIB}


def environment(torch: Any, cli: str) -> dict:
    """torch, CUDA, cuDNN, transformers (peft, bitsandbytes when present), the GPU and its driver."""
    env: dict = {"python": sys.version.split()[0], "torch": torch.__version__, "cuda": torch.version.cuda,
                 "cudnn": torch.backends.cudnn.version(), "gpumem": gpumem_version(cli)}
    for name in ("transformers", "peft", "bitsandbytes", "accelerate"):
        try:
            env[name] = importlib.import_module(name).__version__
        except ImportError:
            pass
    props = torch.cuda.get_device_properties(0)
    env["gpu"] = props.name
    env["gpu_memory_gib"] = round(props.total_memory / GIB, 4)
    env["compute_capability"] = f"{props.major}.{props.minor}"
    smi = shutil.which("nvidia-smi")
    if smi:
        q = subprocess.run([smi, "--query-gpu=driver_version", "--format=csv,noheader", "-i", "0"],
                           capture_output=True, text=True)
        if q.returncode == 0:
            env["driver"] = q.stdout.strip()
    return env


# ---------------------------------------------------------------------------------------------
# Modes
# ---------------------------------------------------------------------------------------------

def cmd_scenario(args: argparse.Namespace) -> int:
    given = json.loads(Path(args.scenario).read_text())
    cli = find_gpumem(args.gpumem)
    est = resolve(cli, given)
    s = est["scenario"]
    bad = unsupported(s)
    if bad:
        raise Refusal("the probe (v1: one process on one GPU, transformers) cannot run this scenario: " + "; ".join(bad))
    try:
        torch = importlib.import_module("torch")
    except ImportError as e:
        raise Refusal(f"torch is not installed: {INSTALL['torch']} [{e}]")
    if not torch.cuda.is_available():
        raise Refusal(f"no CUDA device: torch {torch.__version__} (CUDA build {torch.version.cuda}) sees no GPU; "
                      "the probe measures a real GPU (run it where one is)")
    transformers = need("transformers", "the probe builds the model from config.json")
    cfg, cfg_from = model_config_dict(s)
    env = environment(torch, cli)  # before the run: initialises CUDA, whose context counts in device_total
    if s.get("mode") == "inference":
        peaks, per_step = run_inference(torch, transformers, cfg, s["inference"], args.new_tokens)
    else:
        peaks, per_step = run_training(torch, transformers, cfg, s["training"], args.steps)
    stamp = _dt.datetime.now(_dt.timezone.utc)
    rec_id = args.id or f"probe-{Path(args.scenario).stem}-{stamp:%Y%m%dT%H%M%SZ}"
    source = args.source or f"gpumem probe on {env['gpu']}, {stamp:%Y-%m-%d}"
    detail = {"config": cfg_from, "steps": args.steps if s.get("mode") != "inference" else None,
              "samples": per_step}
    recs = make_records(record_scenario(given, s, env["gpu_memory_gib"]), peaks, env, rec_id, source,
                        estimate_gib(est), detail)
    write_records(recs, args.out)
    for r in recs:
        print(f"{r['id']}: measured {r['measured']['gib']:.2f} GiB, gpumem {r.get('gpumem_estimate_gib', 0):.2f} GiB",
              file=sys.stderr)
    return 0


def write_records(recs: list[dict], out: Optional[str]) -> None:
    text = "".join(json.dumps(r) + "\n" for r in recs)
    if out:
        with open(out, "a") as f:  # appends: one file collects many runs for gpumem calibrate
            f.write(text)
    else:
        sys.stdout.write(text)


SELFTEST_SCENARIO = {"version": 1, "model": {"preset": "HuggingFaceTB/SmolLM2-135M-Instruct"}, "mode": "training",
                     "training": {"method": "full", "batch_size": 2, "seq_len": 512, "dtype": "bf16",
                                  "precision": "pure", "optimizer": "adamw"}}


def cmd_selftest(args: argparse.Namespace) -> int:
    """Records from fake peaks (no torch, no GPU) through the same writer, for the tests."""
    given = json.loads(Path(args.scenario).read_text()) if args.scenario else SELFTEST_SCENARIO
    cli = find_gpumem(args.gpumem)
    est = resolve(cli, given)
    guess = estimate_gib(est)
    peaks = {m: v * 1.07 for m, v in guess.items()}  # a made-up measurement near the estimate
    env = {"torch": "fake", "cuda": "fake", "cudnn": None, "transformers": "fake", "gpu": "selftest",
           "gpu_memory_gib": 79.6475, "driver": "fake", "gpumem": gpumem_version(cli)}
    recs = make_records(record_scenario(given, est["scenario"], env["gpu_memory_gib"]), peaks, env,
                        args.id or "selftest", args.source or "gpumem probe --selftest (fake peaks)", guess)
    write_records(recs, args.out)
    return 0


def count_parameters(model: Any) -> int:
    # nn.Module.parameters() yields each Parameter once: tied embeddings count once
    return sum(p.numel() for p in model.parameters())


def meta_model(torch: Any, transformers: Any, cfg: dict) -> Any:
    """The module tree without memory: torch.device('meta') as a context manager (torch >= 2.0),
    else accelerate.init_empty_weights."""
    config = auto_config(transformers, cfg)
    cls = model_class(transformers, cfg)
    build = lambda: from_config(transformers, cls, config)  # noqa: E731
    if hasattr(torch.device("meta"), "__enter__"):
        with torch.device("meta"):
            return build()
    accelerate = importlib.import_module("accelerate")
    with accelerate.init_empty_weights():
        return build()


def cmd_check_counts(args: argparse.Namespace) -> int:
    gone = missing(("torch", "transformers"))
    if gone:
        print(f"skipped: {' and '.join(gone)} not installed ({'; '.join(INSTALL[g] for g in gone)}): "
              "the parameter-count check builds every preset with transformers on the meta device")
        return 0
    torch = importlib.import_module("torch")
    transformers = importlib.import_module("transformers")
    if not hasattr(torch.device("meta"), "__enter__") and missing(("accelerate",)):
        print(f"skipped: torch {torch.__version__} has no meta-device context (needs torch >= 2.0) "
              f"and accelerate is not installed ({INSTALL['accelerate']})")
        return 0
    cli = find_gpumem(args.gpumem)
    ids = [m["id"] for m in run_gpumem(cli, ["presets", "--json"])["models"]]
    if args.only:
        ids = [i for i in ids if any(o.lower() in i.lower() for o in args.only)]
    bad = ok = skipped = 0
    print(f"transformers {transformers.__version__}, torch {torch.__version__}, {len(ids)} presets")
    print(f"{'preset':55} {'gpumem':>15} {'transformers':>15}  result")
    for mid in ids:
        want = run_gpumem(cli, ["params", "--model", mid, "--json"])["total"]
        rec = preset_record(mid)
        if not rec or not isinstance(rec.get("config"), dict):
            print(f"{mid:55} {want:>15} {'':>15}  skip: no presets/models record with a config in this checkout")
            skipped += 1
            continue
        try:
            got = count_parameters(meta_model(torch, transformers, rec["config"]))
        except Exception as e:  # an architecture this transformers lacks, or needs trust_remote_code
            print(f"{mid:55} {want:>15} {'':>15}  skip: transformers cannot build it: {type(e).__name__}: {str(e)[:120]}")
            skipped += 1
            continue
        same = got == want
        ok += same
        bad += not same
        print(f"{mid:55} {want:>15} {got:>15}  {'ok' if same else 'MISMATCH %+d' % (got - want)}")
    print(f"{ok} match, {bad} differ, {skipped} skipped")
    return 1 if bad else 0


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="probe.py",
        description="Run a gpumem scenario on one GPU with random weights and write gpumem calibrate records "
                    "(allocated, reserved, device_total), or check transformers' parameter counts against gpumem's.",
        epilog="exit codes: 0 ok (a first line 'skipped: ...' when a check cannot run here), 1 failure, "
               "2 cannot run here (no CUDA device, a missing package, an unsupported scenario field). "
               "tools/probe/README.md")
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--scenario", metavar="FILE", help="a gpumem scenario JSON to run on the GPU")
    mode.add_argument("--check-counts", action="store_true",
                      help="CPU only: every bundled preset built on the meta device, its parameters against gpumem params")
    p.add_argument("--selftest", action="store_true",
                   help="write records from fake peaks (no torch, no GPU): the record format, for the tests")
    p.add_argument("--gpumem", metavar="PATH", help="the gpumem CLI (default $GPUMEM_CLI, this checkout's build, PATH)")
    p.add_argument("--steps", type=int, default=3, help="optimizer steps (default 3; the peak after step 2 holds the optimizer states)")
    p.add_argument("--new-tokens", type=int, default=16,
                   help="inference: tokens generated after the prefill, which fills the rest of the context (default 16)")
    p.add_argument("--out", metavar="FILE", help="append the records to FILE (default stdout)")
    p.add_argument("--id", help="the records' id prefix (default probe-SCENARIO-TIME); each gets -METRIC")
    p.add_argument("--source", help="the records' source text (default: the GPU and the date)")
    p.add_argument("--only", nargs="*", help="--check-counts: only presets whose id contains one of these")
    # --selftest runs alone or with --scenario: let it stand without a mode
    if "--selftest" in argv and not any(a.startswith(("--scenario", "--check-counts")) for a in argv):
        argv = [*argv, "--scenario", ""]
    return p.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse(argv)
    try:
        if args.selftest:
            return cmd_selftest(args)
        if args.check_counts:
            return cmd_check_counts(args)
        if args.steps < 1:
            raise Refusal("--steps must be at least 1")
        return cmd_scenario(args)
    except Refusal as e:
        print(f"probe: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # the run itself failed (torch.cuda.OutOfMemoryError among others): no record
        traceback.print_exc()
        what = "out of memory" if type(e).__name__ == "OutOfMemoryError" else f"{type(e).__name__}: {e}"
        print(f"probe: the run failed, no record written: {what}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
