"""Stage ``gate``: the gate model's blind calls over the 2N orders -> accepted and rejected item ids.

When the gate model is in the predictions (the probed model, or a panel member: the default gate is the
panel's lexical model), its blind calls are read from there; otherwise the gate model is probed blind
here (through the same response cache) and its calls are written to ``results/gate/predictions.parquet``
so the analysis can measure agreement with it.
"""

from __future__ import annotations

import logging

from blindmcq import paths
from blindmcq.analysis.frame import baseline_from_params
from blindmcq.analysis.gate import gate, write_gate
from blindmcq.answers.predictions import read_predictions, write_predictions
from blindmcq.config.files import load_label_schemes
from blindmcq.config.schema import Config, Gate
from blindmcq.stages._main import run_stage
from blindmcq.wiring.probe import gate_condition, probe_from_params

log = logging.getLogger(__name__)


def main() -> None:
    def body(config: Config) -> None:
        cfg: Gate = config.group("gate")
        gate_name = config.group("gate_model").name
        out = paths.GATE_DIR / "predictions.parquet"
        predictions = read_predictions(paths.PREDICTIONS)
        if gate_name in set(predictions["model"].astype(str)):
            out.unlink(missing_ok=True)
        else:
            predictions = probe_from_params(
                config,
                label_schemes=load_label_schemes(),
                condition=gate_condition(cfg),
                model_key="gate_model",
            )
            write_predictions(predictions, out)
        result = gate(
            predictions,
            gate_model=gate_name,
            k=cfg.k,
            false_rejection=cfg.false_rejection,
            orders=cfg.orders,
            base=baseline_from_params(config, orders=cfg.orders),
        )
        write_gate(paths.GATE_DIR / "gate.json", result)
        log.info(
            "gate %s (%s): %d accepted, %d rejected, %d cannot be rejected (retained %.3f)",
            gate_name,
            result.describe_thresholds(),
            len(result.accepted),
            len(result.rejected),
            len(result.untestable),
            result.retained_share,
        )

    run_stage("gate", body)


if __name__ == "__main__":
    main()
