"""An eval set of 2 models × 2 benchmarks asking `--variants swap,hflip,order`, against local
test servers: killed midway and resumed, it holds the records an uninterrupted set holds (every
variant and rotation label included), and its `--dry-run` counted exactly the requests the
resume then sent."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from medvqa.cli.main import cli
from medvqa.core.results import variant_of
from tests.cli.test_eval import COMPARED, kill_midway, models_toml, sent
from tests.conftest import shared_data, study_records
from tests.openai_server import OpenAIServer


def write_set(path: Path, study: str, servers: list[OpenAIServer]) -> Path:
    models = models_toml(servers)
    # the JMed48k sample (5 items with their images), and MIR 2026's first 30 questions (24 of
    # them with an image: 1-25, 13 annulled), each under C+Q and C+Q+I with the three variants
    path.write_text(
        f'study_dir = "{study}"\n{models}'
        '[[benchmarks]]\nbenchmark = "jmed48k"\nsample = true\nconditions = "C+Q,C+Q+I"\n'
        'variants = "swap,hflip,order"\n'
        f'[[benchmarks]]\nbenchmark = "mir"\ndata = "{shared_data("mir")}"\n'
        'select = { year = ["2026"] }\nlimit = 30\nconditions = "C+Q,C+Q+I"\nvariants = ["swap", "hflip", "order"]\n',
        encoding="utf-8",
    )
    return path


@pytest.mark.slow
def test_a_set_with_variants_killed_midway_resumes_to_the_records_of_an_uninterrupted_one(tmp_path, monkeypatch):
    servers = [OpenAIServer(latency=0.05).start() for _ in range(2)]
    try:
        killed = write_set(tmp_path / "killed.toml", "killed", servers)
        monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache-killed"))
        first = CliRunner().invoke(cli, ["eval", str(killed), "--dry-run", "--json"])
        assert first.exit_code == 0, first.output
        total = json.loads(first.stdout)["total"]["pairs"]
        env = {**os.environ, "MEDVQA_CACHE_DIR": str(tmp_path / "cache-killed")}
        before = kill_midway(killed, env, servers, total // 3)
        partial = study_records(tmp_path / "killed", COMPARED)
        assert 0 < len(partial) < total  # killed midway

        planned = CliRunner().invoke(cli, ["eval", str(killed), "--dry-run", "--json"])
        assert planned.exit_code == 0, planned.output
        plan = json.loads(planned.stdout)["total"]
        assert sent(servers) == before and plan["recorded"] == len(partial) and plan["pairs"] == total
        resumed = CliRunner().invoke(cli, ["eval", str(killed), "--json"])
        assert resumed.exit_code == 0, resumed.output
        doc = json.loads(resumed.stdout)
        assert len(doc["experiments"]) == 4 and doc["failed"] == []
        # the plan made before the resume counted exactly what the resume then sent
        assert plan["requests"] + plan["preflight"] == sent(servers) - before

        monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache-whole"))
        whole = CliRunner().invoke(cli, ["eval", str(write_set(tmp_path / "whole.toml", "whole", servers)), "--json"])
        assert whole.exit_code == 0, whole.output
        records = study_records(tmp_path / "whole", COMPARED)
        assert study_records(tmp_path / "killed", COMPARED) == records and len(records) == total
        # every variant is there: MIR's 24 image items are one swap group (no image types), the
        # sample's 5 image items are each alone in theirs (a profession and image type of their own)
        held = Counter((key[0], key[1], variant_of(key[3])) for key in records)  # (benchmark, model, variant)
        for model in ("m0", "m1"):
            assert (held[("mir", model, "swap")], held[("jmed48k", model, "swap")]) == (24, 0)  # under C+Q+I
            assert (held[("mir", model, "hflip")], held[("jmed48k", model, "hflip")]) == (24, 5)
            # the sample's 11 reorderable items under C+Q, ten with 5 options and one with 4: 10 × 4 + 3
            # rotations; under C+Q+I the two of them with their image (Physician A_Q3, B_Q3): 2 × 4
            assert held[("jmed48k", model, "order")] == 43 + 8 and held[("mir", model, "order")] > 0
    finally:
        for s in servers:
            s.stop()
