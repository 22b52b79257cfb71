"""Backend settings as data: `medvqa run -M KEY=VALUE` (repeatable) and `--model-config FILE`
read into a typed options object per backend kind, so that `run` needs no new flag per setting.

Each built-in backend kind declares its options as a pydantic model (`LiteLLMOptions`,
`VLLMOptions`; the baselines take none), on its factory's `options` attribute. A third-party
factory may declare one too; without it, its options are passed to it as given.

- `-M KEY=VALUE`: the value is read as JSON when it parses (`0.5`, `true`, `[...]`, `{...}`), as
  a string otherwise; `-M params.top_p=0.9` sets one entry of a mapping option (`params`,
  `engine_options`); `-M max-tokens=5` is `max_tokens`.
- `--model-config FILE`: a mapping of the same keys, in JSON (`.json`), TOML (`.toml`) or YAML
  (`.yaml`, `.yml`).
- Precedence: the file, then `-M` over it. A flag of `medvqa run` (`--temperature`, ...) and
  `-M` naming the same key is an error (one command line, two values); a flag over a key of the
  file wins, as the command line does over a file in most tools.
- The values reach the backend exactly as the equivalent flags' do (`-M temperature=0` is the
  float 0.0 of `--temperature 0`), so the same settings give the same request keys.
- Credentials are never options: a key that names one (`api_key`, `token`, ...; also inside
  `params` and `engine_options`, at any depth: `params.extra_body.auth.api_key`) is refused
  without its value being repeated. Keys are read by
  the provider libraries from the environment; header values given in `params.extra_headers`
  are masked in the manifest, as `--param`'s are.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, get_args, get_origin
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, NonNegativeFloat, ValidationError, field_validator

from ..errors import UsageError
from ..items import DataError
from ..jsonl import load_yaml
from .secrets import credential_entries, is_secret_name

# options whose values are mappings: `-M params.top_p=0.9` sets one of their entries
MAPPINGS = ("params", "engine_options")


class BackendOptions(BaseModel):
    """Options common to every typed backend kind: none. Unknown keys are refused."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)

    @field_validator("*", mode="before")
    @classmethod
    def _no_booleans_for_numbers(cls, value: Any) -> Any:
        if isinstance(value, bool):  # pydantic would take true for 1
            raise ValueError("expected a number or a string, not true/false")
        return value


class GenerationOptions(BackendOptions):
    temperature: float | None = None
    max_tokens: int | None = Field(None, ge=1)
    params: dict[str, Any] | None = None  # any other generation parameter; a null value removes a default
    max_image_side: int | None = Field(None, ge=16)


class LiteLLMOptions(GenerationOptions):
    """The options of the `litellm` backend (any litellm model string)."""

    response_format: Literal["auto", "json_schema", "json_object", "none"] | None = None
    api_base: list[str] | None = None  # one server, or several to load-balance over
    model_list: str | None = None  # a YAML model list (litellm Router format)
    concurrency: int | None = Field(None, ge=1)
    rpm: float | None = Field(None, gt=0)
    timeout: float | None = Field(None, gt=0)
    max_retries: int | None = Field(None, ge=0)
    retry_wait: float | None = Field(None, ge=0)
    max_retry_wait: float | None = Field(None, ge=0)  # the longest wait a server's Retry-After gets
    price: tuple[NonNegativeFloat, NonNegativeFloat] | None = None  # USD per million prompt and completion tokens
    workers: int | None = Field(None, ge=1)
    # how much a reasoning model reasons ("low", "medium", "high", ...): sent as the parameter
    # `reasoning_effort`, as `params.reasoning_effort` is (the same request, the same key)
    reasoning_effort: str | None = None

    @field_validator("api_base", mode="before")
    @classmethod
    def _one_or_several(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("api_base")
    @classmethod
    def _urls(cls, value: list[str] | None) -> list[str] | None:
        for url in value or ():
            problem = url_problem(url)
            if problem:
                raise ValueError(problem)
        return value

    @field_validator("model_list")
    @classmethod
    def _existing_file(cls, value: str | None) -> str | None:
        if value is not None and not Path(value).is_file():
            raise ValueError(f"no such file: {value}")
        return value

    @field_validator("price", mode="before")
    @classmethod
    def _in_out(cls, value: Any) -> Any:
        return value.split(",") if isinstance(value, str) else value


class VLLMOptions(GenerationOptions):
    """The options of the `vllm` backend (`vllm/<model>`, offline on local GPUs)."""

    response_format: Literal["auto", "json_schema", "none"] | None = None
    tensor_parallel_size: int | None = Field(None, ge=1)
    # one data-parallel rank per process, as vLLM runs them: above 1, refused with the way to run replicas
    data_parallel_size: int | None = Field(None, ge=1)
    batch_size: int | None = Field(None, ge=1)
    engine_options: dict[str, Any] | None = None  # vllm.LLM(...) arguments


def url_problem(url: str) -> str | None:
    """Why `url` is not a server URL http(s)://host[:port][/path] (None: it is one)."""
    try:
        parts = urlsplit(url)
        _ = parts.port  # a port that is not a number raises here
    except ValueError as exc:
        return f"{url!r} is not a URL ({exc})"
    if parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() for c in url):
        return f"{url!r} is not a URL; expected http(s)://host[:port][/path]"
    return None


# -- reading -M and --model-config ------------------------------------------------------------


def _key(name: str) -> str:
    return name.strip().replace("-", "_")


def parse_model_options(pairs: list[str] | tuple[str, ...]) -> dict[str, Any]:
    """`-M KEY=VALUE` pairs as a mapping (see the module's docstring); a key given twice, or a
    pair without `=`, is a `UsageError`."""
    out: dict[str, Any] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"-M: expected KEY=VALUE, got {pair!r}")
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = text
        head, dot, sub = _key(name).partition(".")
        if dot and head in MAPPINGS and sub:
            into = out.setdefault(head, {})
            if not isinstance(into, dict):
                raise UsageError(f"-M {head}: given as a whole and as -M {head}.{sub}; give one")
            if sub in into:
                raise UsageError(f"-M {head}.{sub} is given twice")
            into[sub] = value
            continue
        key = _key(name)
        if key in out:
            raise UsageError(
                f"-M {key} is given twice"
                if key not in MAPPINGS or not isinstance(out[key], dict) or not isinstance(value, dict)
                else f"-M {key}: given as a whole and by entry; give one"
            )
        out[key] = value
    return out


def read_model_config(path: str | Path) -> dict[str, Any]:
    """The options in a model config file: a mapping, in JSON, TOML or YAML by the file's suffix
    (JSON for any other). A file that cannot be read or parsed, or holds no mapping, is a
    `DataError` naming it."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(
            f"cannot read the model config ({exc.strerror if isinstance(exc, OSError) else exc})", file=path
        ) from None
    suffix = path.suffix.lower()
    try:
        if suffix == ".toml":
            import tomllib

            data = tomllib.loads(text)
        elif suffix in (".yaml", ".yml"):
            data = load_yaml(text, file=path)
        else:
            data = json.loads(text)
    except DataError:
        raise
    except Exception as exc:  # each format's own parse error, with its line
        kind = {".toml": "TOML", ".yaml": "YAML", ".yml": "YAML"}.get(suffix, "JSON")
        raise DataError(f"not a {kind} model config ({' '.join(str(exc).split())})", file=path) from None
    if not isinstance(data, dict):
        raise DataError(f"a model config holds a mapping of options, not {type(data).__name__}", file=path)
    return {_key(str(k)): v for k, v in data.items()}


# -- resolving them for one backend ----------------------------------------------------------


def resolve(
    model: str,
    flags: dict[str, Any],
    given: dict[str, Any] | None = None,
    config: dict[str, Any] | None = None,
    config_file: str | Path | None = None,
    given_as: str = "-M {}",
) -> dict[str, Any]:
    """The options of `model`'s backend: `config` (read from `config_file`), then `given` (the
    `-M` pairs) over it, checked against the backend kind's options model, then `flags` (the
    command's own options, already checked by the command line) over both. A flag and `-M`
    naming the same key, an unknown key, a bad value or a credential is an error naming the
    key, and the file where it comes from the file (`UsageError` for `-M`, `DataError` for the
    file); a value is never repeated in an error about a credential. `given_as` names a key of
    `given` in errors (`medvqa.run`'s are `backend_options['KEY']`)."""
    from .. import plugins

    given, config = dict(given or {}), dict(config or {})
    for key in sorted(set(flags) & set(given)):
        if key in MAPPINGS and isinstance(given[key], dict) and isinstance(flags[key], dict):
            if both := sorted(set(flags[key]) & set(given[key])):
                raise UsageError(
                    f"{flag_name(key)} {both[0]}=... and -M {key}.{both[0]} both set {key}.{both[0]}; give one"
                )
            continue
        raise UsageError(f"{flag_name(key)} and -M {key} both set {key}; give one")

    def where(key: str) -> str:
        return given_as.format(key) if key in given else f"{key} (in the model config)"

    def fail(key: str, message: str):
        if key in given or config_file is None:
            return UsageError(f"{where(key)}: {message}")
        return DataError(f"{key}: {message}", file=config_file)

    merged: dict[str, Any] = {}
    for source in (config, given):
        for key, value in source.items():
            if key in MAPPINGS and isinstance(value, dict) and isinstance(merged.get(key), dict):
                merged[key] = {**merged[key], **value}
            else:
                merged[key] = value
    for key, value in merged.items():
        if is_secret_name(key):
            raise fail(
                key,
                "credentials are read from the environment (e.g. OPENAI_API_KEY), never given as "
                "options; nothing was written",
            )
        if key in MAPPINGS and isinstance(value, dict):
            for path, _, by_name in credential_entries(value, f"{key}."):
                if by_name:
                    raise fail(
                        key,
                        f"{path} names a credential; credentials are read from the environment, never given as options",
                    )
    factory = plugins.backend_factory(model)
    schema: type[BackendOptions] | None = getattr(factory, "options", None)  # optional on a plugin's factory
    if schema is None:
        return _combine(merged, flags)
    valid = sorted(schema.model_fields)
    for key in merged:
        if key not in schema.model_fields:
            kind = factory.prefix
            hint = " (use --seed)" if key == "seed" else ""
            raise fail(key, f"not an option of {kind} models ({model}){hint}; valid: {', '.join(valid) or 'none'}")
    try:
        checked = schema.model_validate(merged)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        key = str(first["loc"][0]) if first["loc"] else "?"
        raise fail(key, f"{_expected(schema, key, first)} (got {brief(merged.get(key))})") from None
    typed = {k: getattr(checked, k) for k in checked.model_fields_set if getattr(checked, k) is not None}
    if "price" in typed:
        typed["price"] = tuple(typed["price"])
    return _combine(typed, flags)


def _combine(options: dict[str, Any], flags: dict[str, Any]) -> dict[str, Any]:
    out = {**options}
    for key, value in flags.items():
        if key in MAPPINGS and isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = {**out[key], **value}
        else:
            out[key] = value
    return out


def flag_name(key: str) -> str:
    """The `medvqa run` flag that sets option `key` (`--param` sets entries of `params`)."""
    return {"params": "--param", "engine_options": "--engine-option"}.get(key, "--" + key.replace("_", "-"))


def _expected(schema: type[BackendOptions], key: str, error: Mapping[str, object]) -> str:
    """What `key` takes, in words (its type), with pydantic's reason."""
    message = str(error.get("msg", "")).removeprefix("Value error, ")
    field = schema.model_fields.get(key)
    kind = _kind(field.annotation) if field is not None else None
    return f"expected {kind}: {message}" if kind else message


def _kind(annotation: Any) -> str | None:
    args = [a for a in get_args(annotation) if a is not type(None)] or [annotation]
    origin = get_origin(args[0]) or args[0]
    if origin is Literal:
        return "one of " + ", ".join(map(str, get_args(args[0])))
    return {
        float: "a number (float)",
        int: "a whole number (int)",
        str: "a string (str)",
        dict: "a JSON object (dict)",
        list: "a URL or a list of URLs (list)",
        tuple: "two numbers IN,OUT (tuple)",
    }.get(origin)


def brief(value: Any) -> str:
    text = (
        json.dumps(value, ensure_ascii=False, default=str)
        if not isinstance(value, float) or math.isfinite(value)
        else str(value)
    )
    return text if len(text) <= 60 else text[:57] + "..."
