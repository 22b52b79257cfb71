"""`medvqa run --shard`: one share of a run's pairs, for a run split across machines
(core/run/shards.py; `medvqa merge` puts the shards back together)."""

from dataclasses import dataclass
from typing import Any

import click

from .run_options import OptionValues, option_group

shard_option = option_group(
    click.option(
        "--shard",
        metavar="I/N|auto",
        help="Ask shard I (from 0) of N: the pairs of the items whose hashed id falls to it, each shard a run "
        "directory of its own (medvqa merge joins them); auto reads SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT, "
        "or JOB_COMPLETION_INDEX/MEDVQA_SHARD_COUNT (docs/scaling.md).",
    ),
)


@dataclass(frozen=True)
class Sharding(OptionValues):
    """Which share of the run's pairs is asked (None: all)."""

    shard: str | None

    def run_fields(self) -> dict[str, Any]:
        return {"shard": self.shard} if self.shard is not None else {}
