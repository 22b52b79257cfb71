import medvqa
from medvqa.core.conditions import Condition
from medvqa.core.inference.base import request_key
from medvqa.core.messages import Template, messages_for_key
from medvqa.core.plugins import get_benchmark


def sample_items():
    return {it.id: it for it in medvqa.load("jmed48k", split="sample")}


def user_parts(messages):
    content = messages[-1]["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def test_multimodal_order_reference_stem_images_options_instruction():
    bench = get_benchmark("jmed48k")
    item = sample_items()["Physician_2024_B_Q3"]  # two content images
    parts = user_parts(bench.render(item, Condition.CQI))
    kinds = [p["type"] for p in parts]
    assert kinds == ["text", "image", "image", "text"]
    assert item.question in parts[0]["text"]
    assert "基底細胞癌" in parts[-1]["text"] and '{"answer"' in parts[-1]["text"]
    assert all("data:" not in str(p) for p in parts)  # images stay references until sent
    # image removal: same template, no image, and no word about a missing image
    removed = user_parts(bench.render(item, Condition.CQ))
    assert [p["type"] for p in removed] == ["text"]
    assert bench.template(item).name == "jmed48k-ja-multimodal"
    assert "画像" in removed[0]["text"]  # same instruction block as with the image


def test_choices_only_condition_has_no_stem_and_image_as_options_omits_option_list():
    bench = get_benchmark("jmed48k")
    items = sample_items()
    a1 = items["Physician_2024_A_Q1"]
    text = user_parts(bench.render(a1, Condition.C))[0]["text"]
    assert a1.question not in text and "心窩部痛" in text
    io = items["Physician_2024_B_Q2"]
    with_image = user_parts(bench.render(io, Condition.CQI))
    assert "【選択肢】" not in "".join(p.get("text", "") for p in with_image)
    assert "a, b, c, d, e" in with_image[-1]["text"]  # labels still named in the instruction
    reference = items["Physician_2024_B_Q5"]
    assert reference.text_reference in user_parts(bench.render(reference, Condition.CQ))[0]["text"]


def test_request_key_hashes_image_bytes_not_paths(tmp_path):
    bench = get_benchmark("jmed48k")
    item = sample_items()["Physician_2024_A_Q3"]
    msgs = bench.render(item, Condition.CQI)
    moved = [dict(m) for m in msgs]
    moved[-1] = {
        "role": "user",
        "content": [dict(p, path="/elsewhere.png") if p["type"] == "image" else p for p in msgs[-1]["content"]],
    }
    assert messages_for_key(moved) == messages_for_key(msgs)
    assert request_key("m", {"t": 0}, moved) == request_key("m", {"t": 0}, msgs)
    assert request_key("m", {"t": 0}, msgs) != request_key("m", {"t": 1}, msgs)
    assert request_key("m", {}, msgs) != request_key("m", {}, bench.render(item, Condition.CQ))


def test_template_hash_changes_with_its_words():
    assert Template(name="x").hash != Template(name="x", instruction="other {labels} {n}").hash
