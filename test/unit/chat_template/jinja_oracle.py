#!/usr/bin/env python3
"""The jinja2 oracle of the chat-template renderer.

Renders generated cases with jinja2 configured exactly as transformers'
apply_chat_template configures it (ImmutableSandboxedEnvironment with
trim_blocks, lstrip_blocks, loopcontrols and the {% generation %} tag; the
globals raise_exception and strftime_now; transformers' tojson), pipes the
same cases through chat-template-render, and compares: the texts must be
equal, or both must fail (with the same message when the template raised it
with raise_exception). Prints the first mismatches and exits 1 on any.

Cases (from a seeded RNG, so every run checks the same ones):
  - Command R7B's template over many chat shapes (tools, documents, tool
    calls, broken alternation, missing content);
  - the templates in templates/, written in the style of released models
    (Llama 3.1, Mistral, Qwen 2.5, Gemma 3, ChatML, Hermes, Phi-3);
  - small synthetic templates, one per construct, filter, test and method.

usage: jinja_oracle.py CHAT_TEMPLATE_RENDER COMMAND_R7B_TEMPLATE [--seed N]
"""
import argparse
import json
import os
import random
import subprocess
import sys
from datetime import datetime

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension
from jinja2.sandbox import ImmutableSandboxedEnvironment

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle_cases import synthetic_templates  # noqa: E402
from oracle_contexts import Contexts  # noqa: E402

RAISED_PREFIX = "the chat template raised: "


class Raised(jinja2.exceptions.TemplateError):
    """What transformers' raise_exception raises (a TemplateError)."""


class AssistantTracker(Extension):
    """transformers' {% generation %}: renders its body (no tracking)."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_generation_support"), [], [],
                               body).set_lineno(lineno)

    @jinja2.pass_eval_context
    def _generation_support(self, context, caller):
        return caller()


def make_environment():
    """transformers' _compile_jinja_template environment."""

    def raise_exception(message):
        raise Raised(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None,
               sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent,
                          separators=separators, sort_keys=sort_keys)

    def strftime_now(format):
        return datetime.now().strftime(format)

    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True,
        extensions=[AssistantTracker, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def reference(env, template, context):
    """("ok", text), ("raised", message) or ("error", message)."""
    try:
        return ("ok", env.from_string(template).render(**context))
    except Raised as e:
        return ("raised", str(e.message))
    except Exception as e:  # jinja2's and Python's errors alike
        return ("error", f"{type(e).__name__}: {e}")


def build_cases(rng, r7b_template, templates_dir):
    contexts = Contexts(rng)
    cases = []
    for _ in range(150):
        cases.append((r7b_template, contexts.cohere_chat(), "command-r7b"))
    for name in sorted(os.listdir(templates_dir)):
        with open(os.path.join(templates_dir, name), encoding="utf-8") as f:
            text = f.read()
        for _ in range(25):
            cases.append((text, contexts.model_chat(name), name))
    for i, text in enumerate(synthetic_templates()):
        for _ in range(3):
            cases.append((text, contexts.synthetic(), f"synthetic #{i}"))
    return cases


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("driver")
    parser.add_argument("r7b_template")
    parser.add_argument("--seed", type=int, default=20250101)
    args = parser.parse_args()

    with open(args.r7b_template, encoding="utf-8") as f:
        r7b = f.read()
    templates_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                 "templates")
    cases = build_cases(random.Random(args.seed), r7b, templates_dir)

    env = make_environment()
    expected = [reference(env, t, c) for t, c, _ in cases]
    lines = "".join(json.dumps({"template": t, "context": c}) + "\n"
                    for t, c, _ in cases)
    run = subprocess.run([args.driver], input=lines, capture_output=True,
                         text=True, timeout=600)
    if run.returncode != 0:
        print(f"chat-template-render failed ({run.returncode}):\n{run.stderr}")
        return 1
    got = [json.loads(line) for line in run.stdout.split("\n") if line]
    if len(got) != len(cases):
        print(f"chat-template-render answered {len(got)} of {len(cases)} cases")
        return 1

    mismatches = []
    for (template, context, label), want, have in zip(cases, expected, got):
        kind, value = want
        if kind == "ok":
            ok = have.get("rendered") == value
        elif kind == "raised":
            ok = have.get("error") == RAISED_PREFIX + value
        else:
            ok = "error" in have
        if not ok:
            mismatches.append((label, template, context, want, have))

    kinds = [k for k, _ in expected]
    print(f"{len(cases)} cases ({kinds.count('ok')} rendered, "
          f"{kinds.count('raised')} raised, {kinds.count('error')} errors), "
          f"{len(mismatches)} mismatches")
    for label, template, context, want, have in mismatches[:8]:
        print(f"--- {label}\ntemplate: {template[:400]!r}")
        print(f"context: {json.dumps(context, ensure_ascii=False)[:400]}")
        print(f"jinja2:  {want[0]} {want[1][:600]!r}")
        print(f"ours:    {json.dumps(have, ensure_ascii=False)[:600]}")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
