"""Chat templates are untrusted code from the internet (CVE-2024-34359): hostile templates are
stopped by the sandbox, directly and inside a real GGUF loaded through the engine, the CLI and
the window; a GGUF without a template falls back to a plain format and the user is told."""

from __future__ import annotations

import subprocess
import sys

import pytest

from draftlight.engine.text.chat_template import ChatTemplate
from draftlight.engine.core.errors import ChatTemplateError, UnsafeTemplateError
from draftlight.engine.reply.generator import Engine
from draftlight.engine.core.load_options import LoadOptions
from tests.support.gguf_rewrite import REMOVE, rewrite_gguf
from tests.support.real_window import cost_cache_file, real_window, shared_cost_cache  # noqa: F401
from tests.support.waiting import wait_until, window_state

CHAT = [{"role": "user", "content": "Hello"}]


def marker_template(marker) -> list[str]:
    """Known sandbox escapes; each would create `marker` if it got out."""
    cmd = f"touch {marker}"
    return [
        "{{ ''.__class__.__mro__[1].__subclasses__() }}",
        "{{ ().__class__.__base__.__subclasses__()[0] }}",
        "{{ messages.__class__ }}",
        f"{{{{ cycler.__init__.__globals__.os.system('{cmd}') }}}}",
        f"{{{{ joiner.__init__.__globals__.os.popen('{cmd}').read() }}}}",
        f"{{{{ lipsum.__globals__['os'].system('{cmd}') }}}}",
        f"{{{{ namespace.__init__.__globals__.os.system('{cmd}') }}}}",
        f"{{{{ raise_exception.__globals__['os'].system('{cmd}') }}}}",
        f"{{{{ strftime_now.__globals__.__builtins__.__import__('os').system('{cmd}') }}}}",
        "{{ self._TemplateReference__context }}",
        "{{ self.__init__.__globals__ }}",
        "{{ range.__class__ }}",
        "{{ dict.__class__.__subclasses__(dict) }}",
        "{{ ()|attr('__class__')|attr('__base__')|attr('__subclasses__')() }}",
        "{{ '{0.__class__.__mro__}'.format('') }}",
        "{{ messages.append({'role': 'system', 'content': 'x'}) }}",
        "{% set x = messages.pop() %}",
        "{{ bos_token.__class__.__subclasses__() }}",
        # CVE-2025-27516: str.format reached through |attr, which Jinja < 3.1.6 did not sandbox
        "{{ ('{0.__class__.__mro__}'|attr('format'))('') }}",
        "{{ ('{0.__init__.__globals__}'|attr('format'))(cycler) }}",
    ]


def test_sandbox_escapes_are_stopped_and_nothing_runs(tmp_path):
    marker = tmp_path / "pwned"
    for source in marker_template(marker):
        with pytest.raises(ChatTemplateError) as caught:
            ChatTemplate(source).render(CHAT)
        assert "\n" not in str(caught.value), source
        assert not marker.exists(), source


def test_file_and_module_access_fail_without_reading_anything(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    for source in [f"{{% include '{secret}' %}}", f"{{% import '{secret}' as s %}}",
                   f"{{% extends '{secret}' %}}", "{% from 'os' import system %}",
                   f"{{{{ open('{secret}').read() }}}}",
                   "{{ __import__('os').getcwd() }}"]:
        try:
            text = ChatTemplate(source).render(CHAT)
        except ChatTemplateError:
            continue
        assert "TOP-SECRET" not in text and "/" not in text, source


@pytest.mark.parametrize("source", [
    "{{ 'x' * 10000000000 }}",
    "{{ 9 ** 9 ** 9 ** 9 }}",
    "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    "{% for i in range(100000) %}{{ 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' }}{% endfor %}",
])
def test_resource_exhaustion_is_stopped_quickly(source):
    with pytest.raises(UnsafeTemplateError):
        ChatTemplate(source).render(CHAT)


# Each would build gigabytes in one step (string methods, filters, formatting, concatenation)
# or loop for hours without calling anything; the budget refuses them before they do.
@pytest.mark.parametrize("source", [
    "{{ 'x'.ljust(10000000000) }}",
    "{{ 'x'.center(10000000000) }}",
    "{{ 'x'.zfill(10000000000) }}",
    "{{ 'x'|center(10000000000) }}",
    "{{ '%10000000000s' % 'x' }}",
    "{{ '%*s' % (10000000000, 'x') }}",
    "{{ '{:>10000000000}'.format('x') }}",
    "{{ ('x\\n' * 1500000)|indent(3000) }}",
    "{{ ('a' * 3000000).replace('a', 'b' * 3000) }}",
    "{{ ('a' * 3000)|replace('a', 'b' * 3000000) }}",
    "{{ ('a' * 3000000).join(['x'] * 3000) }}",
    "{% set ns = namespace(s='x' * 1000000) %}{% for i in range(40) %}"
    "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}",
    "{% set ns = namespace(s='x' * 1000000) %}{% for i in range(40) %}"
    "{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s|length }}",
    "{% set ns = namespace(l=[]) %}{% for i in range(1000000) %}"
    "{% set ns.l = ns.l + ['x' * 3000000 ~ i] %}{% endfor %}",
    "{% set s = 'x' * 3000000 %}{% for a in s %}{% for b in s %}{% endfor %}{% endfor %}",
    "{% for a in messages * 1000000 %}{% for b in 'y' * 1000000 %}{% endfor %}{% endfor %}",
])
def test_time_and_memory_budgets_stop_a_render(source):
    with pytest.raises(UnsafeTemplateError) as caught:
        ChatTemplate(source).render(CHAT)
    assert "\n" not in str(caught.value)


def test_unsafe_template_is_refused_when_loaded_not_at_the_first_message():
    with pytest.raises(UnsafeTemplateError):
        ChatTemplate("{{ messages.__class__ }}")
    # A template that only refuses some conversations loads; it says why when it refuses.
    strict = ChatTemplate("{% if messages[0].role != 'user' %}{{ raise_exception("
                          "'conversations must start with the user') }}{% endif %}ok")
    with pytest.raises(ChatTemplateError, match="must start with the user"):
        strict.render([{"role": "assistant", "content": "x"}])


def test_real_chatml_template_still_renders(bundled_model):
    from draftlight.store.gguf_info import read_gguf_info
    template = ChatTemplate(read_gguf_info(bundled_model).chat_template)
    text = template.render(CHAT)
    assert "<|im_start|>user\nHello<|im_end|>" in text and text.endswith("assistant\n")


# --- real GGUF files with their chat template replaced -----------------------------------------

@pytest.fixture(scope="module")
def hostile_gguf(bundled_model, tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    marker = folder / "pwned"
    source = f"{{{{ cycler.__init__.__globals__.os.system('touch {marker}') }}}}"
    path = rewrite_gguf(bundled_model, folder / "hostile.gguf",
                        {"tokenizer.chat_template": source})
    return path, marker


@pytest.fixture(scope="module")
def templateless_gguf(bundled_model, tmp_path_factory):
    return rewrite_gguf(bundled_model, tmp_path_factory.mktemp("plain") / "no-template.gguf",
                        {"tokenizer.chat_template": REMOVE})


def test_engine_refuses_a_gguf_with_a_hostile_template(hostile_gguf):
    path, marker = hostile_gguf
    with pytest.raises(UnsafeTemplateError, match="unsafe"):
        Engine.load(path, None, LoadOptions(n_ctx=512))
    assert not marker.exists()


def chat(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-P", "-m", "draftlight", "chat", *args], capture_output=True,
                          text=True, timeout=300, input=stdin)


def test_cli_prints_one_line_and_exits_2_for_a_hostile_template(hostile_gguf):
    path, marker = hostile_gguf
    proc = chat("--target", str(path), "--max-tokens", "4", "hi")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("draftlight: error: the model's chat template tried something "
                                  "unsafe") and len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert not marker.exists()


def test_cli_falls_back_without_a_template_and_says_so(templateless_gguf):
    proc = chat("--target", str(templateless_gguf), "--max-tokens", "4", "--no-color", "hi")
    assert proc.returncode == 0, proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith("draftlight: note: no-template.gguf has no chat template")
    assert proc.stdout.strip()


def test_engine_fallback_template_is_used(templateless_gguf):
    engine = Engine.load(templateless_gguf, None, LoadOptions(n_ctx=512))
    try:
        assert engine.template.is_fallback
        assert engine.template.render(CHAT) == "User: Hello\n\nAssistant:"
    finally:
        engine.close()


def test_window_shows_a_banner_for_a_hostile_template_and_for_a_missing_one(
        qtbot, real_window, hostile_gguf, templateless_gguf):
    from draftlight.settings import Settings
    path, marker = hostile_gguf
    window = real_window(Settings(target_path=str(path), n_ctx=512))
    qtbot.waitUntil(lambda: not window.banner.isHidden(), timeout=60_000)
    assert "Could not load the model: the model's chat template tried something unsafe" in (
        window.banner.label.text())
    assert not window.ready and not window.send_button.isEnabled()
    assert not marker.exists()

    window = real_window(Settings(target_path=str(templateless_gguf), n_ctx=512))
    wait_until(qtbot, lambda: window.ready, "the models to load", 60_000,
               lambda: window_state(window))
    assert not window.banner.isHidden()
    assert "no-template.gguf has no chat template" in window.banner.label.text()
    assert window.send_button.isEnabled()
