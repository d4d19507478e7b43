// Types for the gpumem WebAssembly module (the npm package "gpumem"). Each function takes and
// returns JSON text; parse the result and check `ok` before reading it. The documents' fields are
// described in the repository's README ("Scenarios", "Planner") and core/include/gpumem/gpumem.h.

/** A problem with the input, naming the field, what is allowed and what was given. */
export interface GpumemError {
  field: string;
  problem: string;
  value: string;
  message: string;
}

/** What every function returns for input it cannot use (as JSON text). */
export interface GpumemErrorDocument {
  ok: false;
  errors: GpumemError[];
}

export interface GpumemModule {
  /** A scenario document (JSON text) -> the estimate: per-GPU peak and its breakdown (JSON text). */
  estimate(scenarioJson: string): string;
  /** A Hugging Face config.json (JSON text) -> exact parameter counts by component (JSON text). */
  params(configJson: string): string;
  /** The bundled models, GPUs and weight formats: {"models", "gpus", "formats"} (JSON text). */
  presets(): string;
  /** A scenario document -> the largest batch, sequence or concurrency that fits (JSON text). */
  maxfit(scenarioJson: string): string;
  /** A scenario document with a "plan" section -> the cluster's layouts that fit, fastest first (JSON text). */
  plan(requestJson: string): string;
  /** Every enumerated setting: {path: {default, help, values: [{name, aliases, label, help}]}} (JSON text). */
  settings(): string;
  /** A scenario document -> the smallest changes that make it fit, each with its scenario and estimate (JSON text). */
  fit(scenarioJson: string): string;
  /** {"format": "deepspeed" | "accelerate" | "torchrun" | "torchtune" | "axolotl" | "litgpt" | "vllm" | "llama.cpp",
   *  "scenario": {...}} -> {"ok", "format", "kind", "file_name", "text", "notes", "scenario", "estimate"} (JSON text). */
  exportConfig(requestJson: string): string;
  /** A DeepSpeed ds_config.json (JSON text) -> {"ok", "scenario": the fields it decides, "notes"} (JSON text). */
  importDeepspeed(dsConfigJson: string): string;
  /** {"files": [{"name", "text"}], "command"?: "vllm serve ..."}: the tools' configs and launch commands
   *  (DeepSpeed JSON; accelerate, axolotl, torchtune, litgpt YAML; torchrun, vllm serve, ... lines) ->
   *  {"ok", "scenario": the fields they set, "model": the model they name ("" if none), "check": {"format",
   *  "formats", "files", "read", "ignored", "warnings", "assumptions"}} (JSON text). */
  readConfigs(requestJson: string): string;
  /** {"records": [{"id", "source", "scenario", "measured": {"metric", "gib"}}], "name"} -> a calibration file and
   *  its before / after / leave-one-out report (JSON text). */
  calibrate(requestJson: string): string;
  /** {"scenario", "field": "training.seq_len" | "training.batch_size" | "inference.context_len" |
   *  "inference.batch_size", "max"?} -> {"ok", "points": [{"value", "device_total_bytes", "fits"}], "capacity_bytes",
   *  "max_fit", "current", "label"} (JSON text). */
  sweep(requestJson: string): string;
  /** A sweep() result (JSON text) -> an SVG picture of it (SVG text; "" for anything else). */
  sweepSvg(sweepJson: string): string;
  /** The version, "MAJOR.MINOR.PATCH" (plain text, not JSON). */
  version(): string;
}

/** Instantiates the module (the WebAssembly is inside the file: nothing is fetched). */
declare function createGpumem(overrides?: Record<string, unknown>): Promise<GpumemModule>;

export default createGpumem;
export { createGpumem };
