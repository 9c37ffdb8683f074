"""The differential harness: paired torch / MindSpore models on the same weights and inputs.

Parts (one module each):
  weights   transfer_weights(src, dst): parameters and buffers by structure and name, both ways;
            the per-layer name correspondences (BatchNorm weight <-> gamma, ...) come from mappings/.
  runs      run_torch / run_mindspore: one forward and one backward (seeded random cotangent) in
            the mode the model is in; a RunResult holds every output, input gradient, parameter
            gradient and buffer as NumPy arrays, named in torch's terms.
  compare   compare_results(a, b) row by row with per-dtype tolerances; compare(torch_model,
            ms_model, inputs) = transfer + run both + compare_results.
  training  compare_training(torch_model, ms_model, batches, loss=, optimizer=, ...): N training steps on
            both sides, the MindSpore optimizer, loss and schedule built from mappings/training.yaml,
            judged after every step. training_cases: correct ports and planted bugs for its proof.
  zoo       the paired model zoo (each pair: a torch twin, a MindSpore twin, inputs), with
            recompute on or off in each framework's own forms.
  mindspore torch idioms on MindSpore (checkpoint, checkpoint_sequential with torch's semantics).
  torch     MindSpore idioms on torch (recompute, Cell.recompute()-like marking of a module).
  examples  run_model_example: one core entry's paired model example through compare.
  graph_recompute  recomputed_ops(cell, *inputs): the operators a GRAPH-mode gradient recomputes, read from
            the graph MindSpore compiles (scope in the cell, op name, cell or primitive mark);
            torch_recomputed_modules(model, *inputs): what torch's checkpointing reruns, the regions to expect.
  prove     `recompat prove`: runs every mapping entry's paired example and writes its output.txt (the
            proof translate --scope model waits for) when the pair agrees.
"""

from .compare import CompareReport, CompareRow, compare, compare_results
from .graph_recompute import (IRFormatError, PythonFallbackError, RecomputedOp, recomputed_ops,
                              torch_recomputed_modules)
from .runs import MindSporeGraphError, RunResult, run_mindspore, run_torch
from .training import TrainingError, TrainingReport, compare_training
from .weights import Transfer, WeightTransferError, transfer_weights

__all__ = ["compare", "compare_results", "CompareReport", "CompareRow", "run_torch", "run_mindspore", "RunResult",
           "MindSporeGraphError", "transfer_weights", "Transfer", "WeightTransferError", "compare_training",
           "TrainingReport", "TrainingError", "recomputed_ops", "RecomputedOp", "IRFormatError",
           "PythonFallbackError", "torch_recomputed_modules"]
