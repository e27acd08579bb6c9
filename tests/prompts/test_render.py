"""Templates: format, strict placeholders, automatic variables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel, Field, computed_field

from epigraph.errors import UsageError
from epigraph.prompts import Prompt, TemplateError, render
from epigraph.prompts.render import format_rules, output_schema, parse_template
from tests.support.prompt_defs import EXAMPLE, EntityOut, EpisodeIn


def prompt_with(tmp_path: Path, body: str, input_model: type[BaseModel] = EpisodeIn, **kw: object) -> Prompt:
    (tmp_path / "p.txt").write_text(body)
    example = kw.pop("example", EXAMPLE)
    return Prompt(
        name="p",
        version="1",
        input_model=input_model,
        output_model=kw.pop("output_model", EntityOut),  # type: ignore[arg-type]
        response_type=kw.pop("response_type", "jsonl"),  # type: ignore[arg-type]
        example=example,  # type: ignore[arg-type]
        template_dir=tmp_path,
    )


def test_renders_sections_and_values(entities_prompt: Prompt) -> None:
    messages = render(entities_prompt, EXAMPLE)
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "Not sent" not in messages[0]["content"]  # the preamble is a maintainer note
    user = messages[1]["content"]
    assert 'Speakers: ["Alice"]' in user  # non-str values as compact JSON
    assert "Alice: I moved to Paris." in user  # str values as-is
    assert "one complete JSON object per line" in messages[0]["content"]
    schema = json.loads(user.split("Schema of each line: ", 1)[1])
    assert schema["properties"]["name"]["type"] == "string"


def test_few_shot_sections_keep_order(summary_prompt: Prompt) -> None:
    roles = [m["role"] for m in render(summary_prompt, EXAMPLE)]
    assert roles == ["system", "user", "assistant", "user"]


def test_missing_variable_fails_loudly(tmp_path: Path) -> None:
    p = prompt_with(tmp_path, "## user\n{{episode}} {{speakers}} {{mood}}")
    with pytest.raises(TemplateError, match="mood"):
        render(p, EXAMPLE)


def test_unused_input_field_fails_loudly(tmp_path: Path) -> None:
    p = prompt_with(tmp_path, "## user\n{{episode}}")
    with pytest.raises(TemplateError, match="speakers"):
        render(p, EXAMPLE)


def test_template_error_is_a_usage_error(tmp_path: Path) -> None:
    p = prompt_with(tmp_path, "## user\n{{episode}}")
    with pytest.raises(UsageError):
        render(p, EXAMPLE)


def test_missing_template_names_prompt_and_file(tmp_path: Path) -> None:
    p = prompt_with(tmp_path, "")
    (tmp_path / "p.txt").unlink()
    with pytest.raises(TemplateError, match=r"'p'.*p\.txt"):
        render(p, EXAMPLE)


def test_missing_packaged_template_fails_loudly() -> None:
    p = Prompt(
        name="nope",
        version="1",
        input_model=EpisodeIn,
        output_model=None,
        response_type="text",
        example=EXAMPLE,
    )
    with pytest.raises(TemplateError, match=r"nope\.txt"):
        render(p, EXAMPLE)


@pytest.mark.parametrize(
    ("body", "match"),
    [
        ("no sections at all {{episode}}", "no '## user'"),
        ("## system\nx\n## user\ny\n## assistant\nz", "last section"),
        ("## user\na\n## system\nb\n## user\nc", "system"),
        ("## user\n{{episode}} {{speakers}} {{ not valid }}", "malformed"),
    ],
)
def test_malformed_templates(tmp_path: Path, body: str, match: str) -> None:
    with pytest.raises(TemplateError, match=match):
        render(prompt_with(tmp_path, body), EXAMPLE)


def test_values_are_substituted_once(tmp_path: Path) -> None:
    p = prompt_with(tmp_path, "## user\n{{episode}}|{{speakers}}")
    data = EpisodeIn(episode="{{speakers}} {{schema}}", speakers=[])
    assert render(p, data)[0]["content"] == "{{speakers}} {{schema}}|[]"


def test_other_markdown_headers_are_text(tmp_path: Path) -> None:
    p = prompt_with(tmp_path, "## user\n## Context\n{{episode}} {{speakers}}\n##user-ish")
    [msg] = render(p, EXAMPLE)
    assert msg["content"].startswith("## Context") and msg["content"].endswith("##user-ish")


def test_field_shadowing_automatic_variable(tmp_path: Path) -> None:
    class Bad(BaseModel):
        format_rules: str

    p = prompt_with(tmp_path, "## user\n{{format_rules}}", input_model=Bad, example=Bad(format_rules="x"))
    with pytest.raises(TemplateError, match="shadow"):
        render(p, Bad(format_rules="x"))


def test_excluded_field_feeding_a_computed_field(tmp_path: Path) -> None:
    class In(BaseModel):
        names: list[str] = Field(exclude=True)

        @computed_field  # type: ignore[prop-decorator]
        @property
        def names_block(self) -> str:
            return "\n".join(f"- {n}" for n in self.names)

    data = In(names=["Alice", "Bob"])
    p = prompt_with(tmp_path, "## user\n{{names_block}}", input_model=In, example=data)
    assert render(p, data)[0]["content"] == "- Alice\n- Bob"


def test_schema_and_rules_per_response_type(
    mixed_prompt: Prompt, decide_prompt: Prompt, summary_prompt: Prompt
) -> None:
    mixed = output_schema(mixed_prompt)
    assert mixed is not None and len(mixed["oneOf"]) == 2
    rules = format_rules(mixed_prompt, mixed)
    assert '"type" field: "entity", "fact"' in rules and "no markdown fences" in rules
    assert "exactly one JSON value" in format_rules(decide_prompt)
    assert output_schema(summary_prompt) is None
    system = render(decide_prompt, EXAMPLE)[0]["content"]
    assert '"duplicate"' in system


def test_parse_template_trims_sections() -> None:
    t = parse_template("note\n## SYSTEM\n\n  a\n\n## User  \nb {{x}}\n\n")
    assert t.sections == (("system", "a"), ("user", "b {{x}}")) and t.placeholders == {"x"}
