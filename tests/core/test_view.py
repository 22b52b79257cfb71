"""`medvqa view` and `medvqa.view`: every item of saved runs in one self-contained page whose
filters show exactly the items the records say, with hostile responses shown as text."""

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner

import medvqa
from medvqa.cli.main import cli
from medvqa.core.run.store import read_records
from medvqa.core.view import gold_text
from tests.conftest import REPO, shared_data

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
HOSTILE = (
    '</script><script>document.body.setAttribute("data-pwned","script")</script>'
    '<img src=x onerror="document.body.setAttribute(\'data-pwned\',\'img\')"> {"answer": ["Z"]}'
)
UNREADABLE = "Lorem ipsum dolor sit amet."


def answer(keys) -> str:
    return json.dumps({"answer": list(keys)})


def wrong(item) -> list[str]:
    """A wrong answer: a key outside the gold, or for numeric slots the first digit changed."""
    key = next((k for k in item.keys if k not in item.gold.keys), None)
    if key is not None:
        return [key]
    digits = list(item.gold.alternatives[0])
    digits[0] = "8" if digits[0] == "9" else "9"
    return digits


@pytest.fixture(scope="module")
def items():
    return medvqa.load("jmed48k", path=shared_data("jmed48k-sample"))


@pytest.fixture(scope="module")
def runs(tmp_path_factory, items):
    """Two runs of the 800-item JMed48k sample, C+Q and C+Q+I. Model "a": without the image
    right on every third item, wrong on the next, unreadable on the third; with it always right;
    one hostile response. Model "b": refuses every image item without its image and is asked
    again with permission to guess (right on even positions), with the image right on the
    first half of the image items only."""
    tmp = tmp_path_factory.mktemp("view")
    image_items = [it for it in items if it.image_available]
    lines_a, lines_b = [], []
    for i, it in enumerate(items):
        gold = it.gold.alternatives[0]
        without = [answer(gold), answer(wrong(it)), UNREADABLE][i % 3]
        lines_a.append({"item_id": it.id, "condition": "C+Q", "response": HOSTILE if i == 1 else without})
        lines_b.append(
            {"item_id": it.id, "condition": "C+Q", "response": '{"answer": []}' if it.image_available else answer(gold)}
        )
    for j, it in enumerate(image_items):
        gold = it.gold.alternatives[0]
        lines_a.append({"item_id": it.id, "condition": "C+Q+I", "response": answer(gold)})
        lines_b.append(
            {
                "item_id": it.id,
                "condition": "C+Q+I",
                "response": answer(gold) if j < len(image_items) // 2 else answer(wrong(it)),
            }
        )
        lines_b.append(
            {"item_id": it.id, "condition": "C+Q/forced", "response": answer(gold) if j % 2 == 0 else answer(wrong(it))}
        )
    out = {}
    for name, lines, extra in (("a", lines_a, {}), ("b", lines_b, {"forced_guess": True})):
        replay = tmp / f"{name}.jsonl"
        replay.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
        run_dir = tmp / name
        medvqa.run(
            "jmed48k",
            f"replay:{replay}",
            data=str(shared_data("jmed48k-sample")),
            conditions="C+Q,C+Q+I",
            run_dir=str(run_dir),
            cache=False,
            progress=False,
            **extra,
        )
        out[name] = run_dir
    out["hostile"] = items[1].id
    return out


def chromium_dom(page: Path, fragment: str, profile: Path) -> str:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip(
            "headless Chromium is not installed (apt-get install -y chromium); CI installs it and runs this check"
        )
    out = subprocess.run(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom", f"{page.as_uri()}#{fragment}"],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def shown_items(dom: str) -> list[str]:
    return re.findall(r'<article class="item" data-item="([^"]*)"', dom)


def body_attrs(dom: str) -> str:
    return re.search(r"<body([^>]*)>", dom).group(1)


def test_gold_is_written_as_the_exam_writes_it(items):
    single = next(it for it in items if it.gold.format == "single" and it.options)
    label = next(o.label for o in single.options if o.key == single.gold.alternatives[0][0])
    assert gold_text(single) == label
    multi = next(it for it in items if it.gold.format == "multi" and it.options)
    labels = {o.key: o.label for o in multi.options}
    assert gold_text(multi) == ", ".join(labels[k] for k in multi.gold.alternatives[0])
    alts = next(it for it in items if it.gold.format == "alternatives")
    assert gold_text(alts).count(" or ") == len(alts.gold.alternatives) - 1
    assert "(" not in gold_text(alts) and "'" not in gold_text(alts)  # no Python repr


@pytest.mark.slow  # two 800-item runs and a page: about 20 s here
def test_the_page_of_800_items_and_two_runs_is_small_and_quick(runs, tmp_path):
    page = tmp_path / "view.html"
    started = time.perf_counter()
    result = CliRunner().invoke(cli, ["view", str(runs["a"]), str(runs["b"]), "--html", str(page)])
    seconds = time.perf_counter() - started
    assert result.exit_code == 0, result.output
    assert seconds < 60  # seconds, not minutes (about 3 s here)
    text = page.read_text(encoding="utf-8")
    assert page.stat().st_size < 15 * 2**20
    assert "http://" not in text.replace("http://www.w3.org/2000/svg", "") and "https://" not in text
    # the hostile response is only ever data: escaped inside the JSON, never markup
    assert "<script>document.body" not in text and "<img src=x" not in text
    data = json.loads(re.search(r'<script type="application/json" id="view-data">(.*?)</script>', text, re.S).group(1))
    assert len(data["items"]) == 800 and [r["label"] for r in data["runs"]] == ["replay:a.jsonl", "replay:b.jsonl"]
    assert len(data["images"]) == len(
        {str(ref.path) for it in medvqa.load("jmed48k", path=shared_data("jmed48k-sample")) for ref in it.usable_images}
    )


@pytest.mark.slow  # headless Chromium, several page loads: about 30 s here
def test_in_chromium_every_item_is_reachable_and_filters_show_exactly_the_expected_items(runs, tmp_path):
    page = medvqa.view(runs["a"], runs["b"], html=tmp_path / "view.html")
    records = {name: read_records(runs[name]) for name in ("a", "b")}
    every = list(dict.fromkeys(r["item_id"] for recs in records.values() for r in recs))
    assert len(every) == 800
    # every item reachable by paging: two pages of 400
    first = chromium_dom(page, "size=400", tmp_path / "p1")
    assert 'data-pages="2"' in body_attrs(first)
    second = chromium_dom(page, "size=400&page=2", tmp_path / "p2")
    assert shown_items(first) + shown_items(second) == every

    failures = [
        i
        for i in every
        if any(r["item_id"] == i and r["status"] == "parse_failure" for recs in records.values() for r in recs)
    ]
    # model a's unreadable third (positions 2, 5, ..., 797) and its hostile reply naming no option
    assert len(failures) == len(range(2, 800, 3)) + 1 and runs["hostile"] in failures
    dom = chromium_dom(page, "status=parse_failure&size=1000", tmp_path / "p3")
    assert shown_items(dom) == failures

    def correct(name, item_id, condition):
        return next(
            (bool(r["correct"]) for r in records[name] if r["item_id"] == item_id and r["condition"] == condition), None
        )

    only_with = {
        name: [i for i in every if correct(name, i, "C+Q+I") is True and correct(name, i, "C+Q") is False]
        for name in records
    }
    n_image = sum(r["condition"] == "C+Q+I" for r in records["a"])
    # a: right with the image everywhere, without it right on every third → 2/3 of the image items;
    # b: refuses without the image, right with it on the first half of them
    assert len(only_with["b"]) == n_image // 2 and 0 < len(only_with["a"]) < n_image
    dom = chromium_dom(page, "transition=p10&size=1000", tmp_path / "p4")
    assert shown_items(dom) == [i for i in every if i in only_with["a"] or i in only_with["b"]]
    label_b = medvqa.read_run(runs["b"]).manifest["model"]
    dom = chromium_dom(page, f"transition=p10&model={quote(label_b, safe='')}&size=1000", tmp_path / "p5")
    assert shown_items(dom) == only_with["b"]
    assert 'data-condition="C+Q/forced"' in dom  # the forced guesses are shown

    # the hostile response is found by free text, shown as text, and nothing of it runs
    dom = chromium_dom(page, "q=DATA-PWNED", tmp_path / "p6")
    assert shown_items(dom) == [runs["hostile"]]
    assert "data-pwned" not in body_attrs(dom) and 'data-rendered-ms="' in body_attrs(dom)
    assert "&lt;/script&gt;&lt;script&gt;document.body.setAttribute" in dom
    assert "&lt;img src=x onerror=" in dom


@pytest.mark.slow  # an audit, a comparison and headless Chromium: about 30 s here
def test_audit_and_compare_cells_link_to_the_browser_showing_their_items(runs, tmp_path):
    from html import unescape
    from urllib.parse import parse_qs

    audit_page = tmp_path / "audit.html"
    result = CliRunner().invoke(
        cli, ["audit", str(runs["a"]), str(runs["b"]), "--html", str(audit_page), "--json", "--resamples", "50"]
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    text = audit_page.read_text(encoding="utf-8")
    links = [unescape(h) for h in re.findall(r'class="view-link" href="([^"]*)"', text)]
    assert links and all(h.startswith("./audit-items.html#") for h in links)
    checked = 0
    for model, section in doc["models"].items():
        rows = {"overall": section["paired"]["overall"]}
        rows.update(
            {
                f"{name}={value}": row
                for name, levels in section["paired"]["by"].items()
                for value, row in levels.items()
            }
        )
        for stratum, row in list(rows.items())[:2]:  # overall and one stratum level
            for state in ("p10", "p00"):
                want = {"model": [model], "transition": [state]} | (
                    {"stratum": [stratum]} if stratum != "overall" else {}
                )
                link = next(h for h in links if parse_qs(h.split("#", 1)[1]) == want)
                dom = chromium_dom(tmp_path / "audit-items.html", link.split("#", 1)[1], tmp_path / f"a{checked}")
                n = row["counts"]["n" + state[1:]]
                assert f'data-matching="{n}"' in body_attrs(dom), (model, stratum, state)
                checked += 1
    assert checked == 8

    compare_page = tmp_path / "cmp.html"
    result = CliRunner().invoke(
        cli, ["compare", str(runs["a"]), str(runs["b"]), "--html", str(compare_page), "--json", "--resamples", "50"]
    )
    assert result.exit_code == 0, result.output
    table = json.loads(result.stdout)["table"]
    text = compare_page.read_text(encoding="utf-8")
    link = unescape(re.findall(r'class="view-link" href="([^"]*)"', text)[0])
    query = parse_qs(link.split("#", 1)[1])
    row = next(
        r
        for r in table
        if r["stratum"] == "overall" and r["model"] == query["model"][0] and r["condition"] == query["condition"][0]
    )
    dom = chromium_dom(tmp_path / "cmp-items.html", link.split("#", 1)[1], tmp_path / "c")
    assert f'data-matching="{row["n"]}"' in body_attrs(dom)
    # the audit pages beside the comparison link to the same browser
    audits = list((tmp_path / "cmp-audits").glob("*.html"))
    assert audits and all('href="../cmp-items.html#' in a.read_text(encoding="utf-8") for a in audits)


SCREENSHOT = REPO / "docs" / "images" / "item-browser.png"
SCREENSHOT_SIZE = (1100, 900)


@pytest.mark.slow  # two runs and a screenshot in headless Chromium: about 10 s here
def test_the_docs_screenshot_is_made_from_the_bundled_sample(tmp_path, monkeypatch):
    """README and docs/audit.md show the browser with this screenshot: two baseline runs of the
    bundled sample filtered to "right only with the image". MEDVQA_UPDATE_SCREENSHOTS=1 writes
    it into docs/images; otherwise the one in the docs must be what this test makes (same size,
    a PNG), and the docs must show it."""
    from PIL import Image

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip(
            "headless Chromium is not installed (apt-get install -y chromium); CI installs it and runs this check"
        )
    dirs = []
    for model in ("random", "constant:1"):
        outcome = medvqa.run(
            "jmed48k",
            model,
            sample=True,
            conditions="C+Q,C+Q+I",
            run_dir=str(tmp_path / model),
            cache=False,
            progress=False,
        )
        dirs.append(outcome.run_dir)
    page = medvqa.view(*dirs, html=tmp_path / "view.html")
    # Japanese glyphs from the IPAexGothic font matplotlib-fontja installs, through fontconfig
    import matplotlib_fontja

    fonts = Path(matplotlib_fontja.__file__).parent / "fonts"
    conf = tmp_path / "fonts.conf"
    conf.write_text(
        f'<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig>'
        f'<include ignore_missing="yes">/etc/fonts/fonts.conf</include><dir>{fonts}</dir>'
        f"<cachedir>{tmp_path / 'fc-cache'}</cachedir></fontconfig>",
        encoding="utf-8",
    )
    monkeypatch.setenv("FONTCONFIG_FILE", str(conf))
    shot = tmp_path / "shot.png"
    out = subprocess.run(
        [
            chromium,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            "--hide-scrollbars",
            f"--window-size={SCREENSHOT_SIZE[0]},{SCREENSHOT_SIZE[1]}",
            f"--screenshot={shot}",
            f"{page.as_uri()}#transition=p10",
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.returncode == 0 and shot.is_file(), out.stderr[-2000:]
    with Image.open(shot) as im:
        assert im.size == SCREENSHOT_SIZE and len(im.convert("L").getcolors(256)) > 50  # not a blank page
    if os.environ.get("MEDVQA_UPDATE_SCREENSHOTS"):
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, SCREENSHOT)
    with Image.open(SCREENSHOT) as im:
        assert im.format == "PNG" and im.size == SCREENSHOT_SIZE
    for doc in ("README.md", "docs/audit.md"):
        assert "images/item-browser.png" in (REPO / doc).read_text(encoding="utf-8"), doc


@pytest.mark.slow  # a judge over real HTTP and headless Chromium: about 15 s here
def test_judges_verdicts_and_boxes_are_shown_as_the_records_hold_them(tmp_path):
    from tests.adapters.mmbu_hard.cases import DETECTION, judge_reply, write_fixture
    from tests.openai_server import OpenAIServer

    root = tmp_path / "hard"
    info = write_fixture(root)
    run_dir = tmp_path / "run"
    with OpenAIServer(reply=judge_reply) as server:
        medvqa.run(
            "mmbu_hard",
            f"replay:{info['replay']}",
            data=str(root),
            run_dir=str(run_dir),
            judges=["hosted_vllm/test"],
            judge_options={"api_base": server.url},
            progress=False,
        )
    records = {(r["item_id"], r["condition"]): r for r in medvqa.read_run(run_dir).records}
    page = medvqa.view(run_dir, html=tmp_path / "view.html")
    text = page.read_text(encoding="utf-8")
    data = json.loads(re.search(r'<script type="application/json" id="view-data">(.*?)</script>', text, re.S).group(1))
    entries = {e["id"]: e for e in data["items"]}
    judged = [k for k, r in records.items() if r.get("judgements")]
    assert judged
    for item_id, cond in judged:
        shown = entries[item_id]["runs"]["0"][cond]
        verdict = records[(item_id, cond)]["judgements"]["hosted_vllm/test"]
        assert shown["j"] == [
            {
                "m": "hosted_vllm/test",
                "v": verdict["verdict"],
                "r": verdict["response"],
                "e": verdict.get("error"),
                "primary": True,
            }
        ]
        assert shown["c"] == records[(item_id, cond)]["correct"]
    for i, (gold, *_rest) in enumerate(DETECTION):
        entry = entries[f"det_grounding_open-{i}"]
        assert entry["gb"] == gold and entry["g"] == "; ".join(f"[{', '.join(str(v) for v in b)}]" for b in gold)
        predicted = records[(f"det_grounding_open-{i}", "C+Q+I")]["predicted"] or []
        assert entry["runs"]["0"]["C+Q+I"]["b"] == [[float(v) for v in p.split(",")] for p in predicted]

    # in the browser: the third detection item (two gold boxes, two predicted, in each of two conditions)
    dom = chromium_dom(page, "q=det_grounding_open-2", tmp_path / "p")
    assert shown_items(dom) == ["det_grounding_open-2"]
    assert dom.count('class="gold-box"') == 2 and dom.count('class="predicted-box"') == 4
    assert '<rect x="80" y="80" width="5" height="5" fill="none" class="predicted-box"' in dom
    one = judged[0]
    dom = chromium_dom(page, f"q={one[0]}&condition={quote(one[1])}", tmp_path / "j")
    assert "judge hosted_vllm/test (counts): " + ("correct" if records[one]["correct"] else "wrong") in dom


@pytest.mark.slow  # two IgakuQA runs and headless Chromium: about 10 s here
def test_language_transitions_filter_the_items_the_audit_counts(tmp_path):
    """IgakuQA block 116-A in Japanese and in English, written with known outcomes: 30 items right
    in both, 10 only in Japanese, 5 only in English, 15 in neither; the browser's language filter
    shows exactly those items, as the audit's language pairing counts them."""
    from medvqa.core.plugins import get_benchmark

    data = shared_data("igakuqa")
    outcomes = {"ja": [1] * 30 + [1] * 10 + [0] * 5 + [0] * 15, "en": [1] * 30 + [0] * 10 + [1] * 5 + [0] * 15}
    dirs, ids = [], None
    for lang, outcome in outcomes.items():
        bench = get_benchmark("igakuqa").with_language(lang)
        items = [
            it
            for it in bench.load(data, select={"block": ["116A"]})
            if it.options
            and not it.excluded
            and it.gold.format == "single"
            and not it.meta["withdrawn"]
            and not it.meta["credited_to_all"]
        ]
        chosen = {"block": ["116A"], "number": [str(it.meta["number"]) for it in items[:60]]}
        items = bench.load(data, select=chosen)
        ids = [it.id for it in items]
        answers = [
            (it, "C+Q", answer(it.gold.alternatives[0] if right else wrong(it))) for it, right in zip(items, outcome)
        ]
        medvqa.write_run(
            bench,
            items,
            answers,
            tmp_path / lang,
            model="replayed",
            load={"data": str(data), "select": chosen},
            saved=False,
        )
        dirs.append(tmp_path / lang)
    counts = medvqa.audit(*dirs, resamples=50)["paired_language"]["ja vs en"]["conditions"]["C+Q"]["overall"]["counts"]
    assert counts == {"n11": 30, "n10": 10, "n01": 5, "n00": 15}
    page = medvqa.view(*dirs, html=tmp_path / "view.html")
    assert shown_items(chromium_dom(page, "language=p10", tmp_path / "p1")) == ids[30:40]
    dom = chromium_dom(page, "language=p01", tmp_path / "p2")
    assert shown_items(dom) == ids[40:45]
    # each item shows its Japanese stem, and the English run's column the English one
    en = {it.id: it for it in get_benchmark("igakuqa").with_language("en").load(data, select=chosen)}
    ja = {it.id: it for it in get_benchmark("igakuqa").with_language("ja").load(data, select=chosen)}
    from html import escape

    for item_id in ids[40:45]:
        assert escape(ja[item_id].question, quote=False) in dom and escape(en[item_id].question, quote=False) in dom
    assert dom.count('<div class="asked" dir="auto">') == 5


def test_a_damaged_record_is_one_line_naming_file_and_line_and_no_page_is_written(tmp_path):
    run_dir = medvqa.run(
        "jmed48k", "random", sample=True, conditions="C+Q", run_dir=str(tmp_path / "run"), cache=False, progress=False
    ).run_dir
    lines = (run_dir / "records.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    lines[2] = json.dumps({"item_id": "x", "condition": "C+Q", "status": "weird"}) + "\n"
    (run_dir / "records.jsonl").write_text("".join(lines), encoding="utf-8")
    page = tmp_path / "view.html"
    page.write_text("an earlier page\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["view", str(run_dir), "--html", str(page)])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"Error: {run_dir / 'records.jsonl'}: record line 3: damaged record (status: Input should be 'answered', "
        "'refusal', 'parse_failure', 'error' or 'missing')"
    ]
    assert page.read_text(encoding="utf-8") == "an earlier page\n"  # nothing already written is lost


@pytest.mark.slow  # an import of 168 items and headless Chromium: about 10 s here
def test_readings_and_gold_are_shown_as_text_not_json(tmp_path):
    """Observed: the page wrote an assisted reading as `{"predicted":["D"],"correct":true,...}`.
    Now every reading is text: the exam's labels, correct or wrong, and who read it."""
    data = shared_data("worldmedqa-v-japan")
    table = data / "visuals" / "outputs_w_images" / "GPT4o" / "GPT4o_japan_local_gpt-4o-mini_result.xlsx"
    result = CliRunner().invoke(
        cli, ["import", "worldmedqa_v", str(table), "--data", str(data), "--run-dir", str(tmp_path / "r"), "--json"]
    )
    assert result.exit_code == 0, result.output
    saved = medvqa.read_run(tmp_path / "r")
    records = [r for r in saved.records if r.get("assisted")]
    assert records
    page = medvqa.view(tmp_path / "r", html=tmp_path / "view.html")
    text = page.read_text(encoding="utf-8")
    doc = json.loads(re.search(r'<script type="application/json" id="view-data">(.*?)</script>', text, re.S).group(1))
    entries = {e["id"]: e for e in doc["items"]}
    items = saved.items
    for rec in records:
        shown = entries[rec["item_id"]]["runs"]["0"][rec["condition"]]["x"]["assisted"]
        a = rec["assisted"]
        labels = {o.key: o.label for o in items[rec["item_id"]].options}
        read = ", ".join(labels.get(k, k) for k in a["predicted"]) if a.get("predicted") else "nothing read"
        assert shown.startswith(f"{read}, {'correct' if a['correct'] else 'wrong'}, by {a['source']}")
        assert "{" not in shown and "[" not in shown
    one = next(r for r in records if r["assisted"].get("predicted"))
    dom = chromium_dom(page, f"q={one['item_id']}", tmp_path / "p")
    item = items[one["item_id"]]
    assert f"answer: {gold_text(item)}" in dom and '{"predicted"' not in dom and "{&quot;" not in dom
    assert f"assisted reading: {entries[one['item_id']]['runs']['0'][one['condition']]['x']['assisted']}" in dom


@pytest.mark.slow  # an IgakuQA year, a comparison and headless Chromium: about 10 s here
def test_the_items_link_under_n_opens_those_n_items(tmp_path):
    """Observed: IgakuQA 2018 holds an item MHLW withdrew (400 records, C+Q n 399) and the
    comparison page's "items" link under n 399 opened 400 items."""
    from html import unescape

    run = tmp_path / "r"
    result = CliRunner().invoke(
        cli,
        [
            "run",
            "igakuqa",
            "--data",
            str(shared_data("igakuqa")),
            "--select",
            "year=2018",
            "--model",
            "random",
            "--run-dir",
            str(run),
            "--no-cache",
        ],
    )
    assert result.exit_code == 0, result.output
    page = tmp_path / "cmp.html"
    result = CliRunner().invoke(cli, ["compare", str(run), "--html", str(page), "--json", "--resamples", "20"])
    assert result.exit_code == 0, result.output
    [row] = [r for r in json.loads(result.stdout)["table"] if r["stratum"] == "overall" and r["condition"] == "C+Q"]
    records = len(medvqa.read_run(run).records)
    assert (records, row["n"]) == (400, 399)
    link = unescape(re.findall(r'class="view-link" href="([^"]*)"', page.read_text(encoding="utf-8"))[0])
    fragment = link.split("#", 1)[1]
    assert "counted=1" in fragment
    assert 'data-matching="399"' in body_attrs(chromium_dom(tmp_path / "cmp-items.html", fragment, tmp_path / "p"))
    every = fragment.replace("&counted=1", "")
    assert 'data-matching="400"' in body_attrs(chromium_dom(tmp_path / "cmp-items.html", every, tmp_path / "q"))
