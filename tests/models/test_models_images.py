"""Pictures in requests, against the real stub server on 127.0.0.1: content parts of the API's
documented shape, detail, the cache key over the image bytes, a text-only config refused before
any request, a text-only server's 400 (or llama.cpp's 500) stopping the run at the first request
with the field to set, batch files carrying pictures and split at the size limit, the dry run."""

import io
import json

import pytest
from model_helpers import make_config
from PIL import Image

from common.errors import ConfigError
from common.models import batch_files, runner
from common.models.base import ModelError
from common.models.batch import BatchOptions
from common.models.builtin import BuiltinModel
from common.models.cache import ResponseCache
from common.models.client import HTTPModel
from common.models.estimate import estimate_run, estimate_text
from common.models.images import attach_images, image_parts, image_tokens, marker, patch_count, tile_count
from common.models.stub_replies import check_messages
from common.models.stub_server import StubServer


def png(colour: tuple[int, int, int], size: tuple[int, int] = (40, 30)) -> bytes:
    """Return a small PNG of one colour."""
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.fixture
def pictures(tmp_path):
    """A picture directory with two pictures, a (red) and b (blue)."""
    directory = tmp_path / "images"
    directory.mkdir()
    (directory / "aaaaaaaaaaaaaaaa.png").write_bytes(png((255, 0, 0)))
    (directory / "bbbbbbbbbbbbbbbb.png").write_bytes(png((0, 0, 255)))
    return directory


def ask(name: str = "aaaaaaaaaaaaaaaa") -> list[dict]:
    return [
        {"role": "system", "content": "You read pictures."},
        {"role": "user", "content": f"Initially:\n{marker(name)}\n\nActions:"},
    ]


def answer(model, item):
    """A one-request protocol: the item's picture, the reply as the record."""
    reply = model.complete(attach_images(ask(item["name"]), item["dir"]), item)
    return {"Key": item["Key"], "resp": reply.text}


def test_markers_become_content_parts_of_the_documented_shape_and_detail_is_sent(server, pictures):
    model = HTTPModel(make_config(server, vision=True, image_detail="low"))
    assert model.complete(attach_images(ask(), pictures)).text == "TRUE"
    sent = server.requests[0]["body"]["messages"]
    assert sent[0] == {"role": "system", "content": "You read pictures."}  # no marker: a plain string
    text, image, tail = sent[1]["content"]
    assert text == {"type": "text", "text": "Initially:\n"} and tail == {
        "type": "text",
        "text": "\n\nActions:",
    }
    assert image["type"] == "image_url" and image["image_url"]["detail"] == "low"
    assert image["image_url"]["url"].startswith("data:image/png;base64,iVBORw0KGgo")
    assert check_messages(sent) is None


@pytest.mark.parametrize(
    "content, param",
    [
        ([{"type": "image_url", "image_url": {"url": "data:image/png;base64,@@@"}}], "url"),
        ([{"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}], "url"),  # not a PNG
        ([{"type": "image_url", "image_url": {"url": "http://x/y.png", "detail": "max"}}], "detail"),
        ([{"type": "image", "image": "AAAA"}], "type"),
        ([{"type": "text", "text": "hi", "extra": 1}], "content.[0]"),
        ([{"type": "image_url", "url": "http://x/y.png"}], "image_url"),
        ([], "content"),
    ],
)
def test_the_stub_answers_400_to_content_parts_off_the_documented_shape(server, content, param):
    model = HTTPModel(make_config(server, vision=True))
    with pytest.raises(ModelError, match="HTTP 400") as stopped:
        model.complete([{"role": "user", "content": content}])
    assert param in str(stopped.value) and "not retried" in str(stopped.value)


def test_the_cache_key_covers_the_image_bytes(server, pictures, tmp_path):
    model = HTTPModel(make_config(server, vision=True), cache=ResponseCache(tmp_path / "c.sqlite"))
    model.complete(attach_images(ask(), pictures))
    assert model.complete(attach_images(ask(), pictures)).cached  # the same picture: from the cache
    (pictures / "cccccccccccccccc.png").write_bytes(png((255, 0, 1)))  # one channel of every pixel apart
    reply = model.complete(attach_images(ask("cccccccccccccccc"), pictures))
    assert not reply.cached and len(server.requests) == 2
    model.close()


def test_several_endpoints_each_get_the_pictures_of_the_requests_they_serve(pictures, tmp_path):
    """Replicas behind a list of URLs: each request, whichever replica serves it, carries its own
    item's picture, of the documented shape, and the run completes."""
    items = [{"Key": k, "name": "ab"[k % 2] * 16, "dir": pictures} for k in range(24)]
    with StubServer(latency=0.01) as one, StubServer(latency=0.01) as two:
        config = make_config(one, base_url=[one.url, two.url], vision=True, concurrency=6)
        out = tmp_path / "image___stub___results.jsonl"
        summary = runner.run_items(HTTPModel(config), items, out, answer=answer, show_progress=False)
        served = [[r["body"]["messages"] for r in s.requests if r["path"].endswith("/chat/completions")]
                  for s in (one, two)]  # fmt: skip
    assert (summary.status, summary.answered) == ("complete", 24)
    assert min(len(requests) for requests in served) >= 4 and sum(map(len, served)) == 24
    sent: dict[str, int] = {}
    for messages in served[0] + served[1]:
        assert check_messages(messages) is None
        (part,) = image_parts(messages)
        sent[part["image_url"]["url"]] = sent.get(part["image_url"]["url"], 0) + 1
    expected = {attach_images(ask(n * 16), pictures)[1]["content"][1]["image_url"]["url"]: 12 for n in "ab"}
    assert sent == expected


def test_a_text_only_config_refuses_a_picture_set_before_any_request(server, pictures, tmp_path):
    model = HTTPModel(make_config(server))  # vision: false, the default
    items = [
        {"Key": k, "name": "aaaaaaaaaaaaaaaa", "dir": pictures, "images": ["aaaaaaaaaaaaaaaa"]}
        for k in range(3)
    ]
    out = tmp_path / "image___stub___results.jsonl"
    with pytest.raises(ModelError, match="set vision: true"):
        runner.run_items(model, items, out, answer=answer, show_progress=False)
    assert not [r for r in server.requests if r["path"].endswith("/completions")]
    assert not out.exists()


@pytest.mark.parametrize("status", [400, 500])
def test_a_text_only_servers_error_stops_the_run_at_the_first_request_naming_the_field(
    pictures, tmp_path, status
):
    with StubServer(text_only=status) as server:
        model = HTTPModel(make_config(server, vision=True, concurrency=4))  # the first is asked alone
        items = [{"Key": k, "name": "aaaaaaaaaaaaaaaa", "dir": pictures, "images": ["x"]} for k in range(5)]
        with pytest.raises(ModelError, match="set vision: false") as stopped:
            runner.run_items(
                model, items, tmp_path / "p___m___results.jsonl", answer=answer, show_progress=False
            )
        completions = [r for r in server.requests if r["path"].endswith("/completions")]
    assert len(completions) == 1  # not retried (llama.cpp's 500 included), no second item asked
    assert f"HTTP {status}" in str(stopped.value)


def test_the_completions_api_cannot_carry_a_picture(server, pictures):
    model = HTTPModel(make_config(server, vision=True, api="completions"))
    with pytest.raises(ModelError, match="set api: chat"):
        model.complete(attach_images(ask(), pictures))
    assert not server.requests


def test_built_in_models_are_asked_any_modality_and_can_read_the_pictures(pictures):
    class Reader(BuiltinModel):
        name = "reader"

    messages = attach_images(ask("bbbbbbbbbbbbbbbb"), pictures)
    (picture,) = Reader().pictures(messages)
    assert Image.open(io.BytesIO(picture)).getpixel((0, 0)) == (0, 0, 255)
    assert Reader().vision


def test_batch_lines_carry_the_pictures_and_a_round_is_split_at_the_size_limit(
    pictures, tmp_path, monkeypatch
):
    line_bytes = []
    with StubServer() as server:
        model = HTTPModel(
            make_config(server, vision=True, batch_poll_s=0.01), cache=ResponseCache(tmp_path / "c")
        )
        items = [{"Key": k, "name": "aaaaaaaaaaaaaaaa", "dir": pictures, "images": ["a"]} for k in range(5)]
        items += [
            {"Key": 5 + k, "name": "bbbbbbbbbbbbbbbb", "dir": pictures, "images": ["b"]} for k in range(5)
        ]
        for k, item in enumerate(items):  # ten distinct requests
            item["name_text"] = f"q{k}"
        one = len(batch_files.input_lines([("x" * 30, {"m": attach_images(ask(), pictures)})], "/v1")[0])
        monkeypatch.setattr(batch_files, "MAX_BYTES", 4 * one)  # about three requests a file

        def protocol(model, item):
            messages = attach_images(ask(item["name"]), item["dir"])
            messages[-1]["content"].append({"type": "text", "text": item["name_text"]})
            return {"Key": item["Key"], "resp": model.complete(messages, item).text}

        out = tmp_path / "image___stub___results.jsonl"
        summary = runner.run_items(
            model, items, out, answer=protocol, batch=BatchOptions(wait=True), show_progress=False
        )
        for path in sorted(tmp_path.glob("*.input.jsonl")):
            lines = path.read_text().splitlines()
            line_bytes.append(len(path.read_bytes()))
            body = json.loads(lines[0])["body"]
            assert body["messages"][1]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert summary.status == "complete" and summary.answered == 10
    assert len(line_bytes) >= 3 and max(line_bytes) <= 4 * one


def test_the_dry_run_counts_requests_text_and_picture_tokens_by_openais_rule(pictures, server):
    items = [{"Key": k, "name": "aaaaaaaaaaaaaaaa", "dir": pictures, "images": ["a"]} for k in range(4)]
    config = make_config(
        server, vision=True, model="gpt-4o", max_tokens=10, price_per_1k_tokens={"input": 1.0}
    )
    estimate = estimate_run(HTTPModel(config), items, answer)
    assert (estimate.items, estimate.requests, estimate.pictures) == (4, 4, 4)
    assert estimate.image_tokens == 4 * (85 + 170)  # one 512-px tile each (40 x 30 pixels)
    assert estimate.output_tokens == 40 and not server.requests
    line = estimate_text("nl___c1 (image)", estimate, config.settings()["price_per_1k_tokens"])
    assert "1,020 for 4 pictures: OpenAI tiles (gpt-4o)" in line and "$" in line
    with pytest.raises(ModelError, match="vision"):  # a text-only config: refused in the dry run too
        estimate_run(HTTPModel(make_config(server, model="gpt-4o")), items, answer)
    keyless = make_config(server, vision=True, model="gpt-4o", api_key_env="DRY_RUN_TEST_UNSET_KEY")
    with pytest.raises(ConfigError, match="DRY_RUN_TEST_UNSET_KEY"):  # a live model needs its key
        HTTPModel(keyless)
    offline = HTTPModel(keyless, offline=True)  # a dry run's: no key, and it sends nothing
    assert estimate_run(offline, items, answer).image_tokens == 4 * (85 + 170)
    with pytest.raises(ModelError, match="dry run"):
        offline.complete(ask(), items[0])
    assert not server.requests


@pytest.mark.parametrize(
    "size, model, detail, expected",
    [
        ((1024, 1024), "gpt-4o", "high", 765),  # the docs' examples
        ((2048, 4096), "gpt-4o", None, 1105),
        ((4096, 8192), "gpt-4o-2024-08-06", "low", 85),
        ((1024, 1024), "gpt-4o-mini", "high", 2833 + 4 * 5667),
        ((1024, 1024), "gpt-4.1-mini", "high", 1659),  # 1024 patches x 1.62
        ((1800, 2400), "gpt-5-mini", None, 2353),  # 1452 patches x 1.62, rounded up
        ((600, 400), "Qwen/Qwen2.5-VL-7B-Instruct", None, 22 * 15),  # 28-px patches
    ],
)
def test_image_tokens_follow_openais_documented_rule(size, model, detail, expected):
    assert image_tokens(*size, model, detail)[0] == expected


def test_the_tile_and_patch_counts_of_the_documented_examples():
    assert tile_count(1024, 1024) == 4 and tile_count(2048, 4096) == 6 and tile_count(100, 100) == 1
    assert patch_count(1024, 1024) == 1024 and patch_count(1800, 2400) == 1452
    assert image_tokens(1, 1, "anything", per_image=300) == (300, "image_tokens of the model config")
