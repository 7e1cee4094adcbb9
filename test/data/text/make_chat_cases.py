#!/usr/bin/env python3
"""Oracle chat cases: transformers' apply_chat_template on generated chats.

    python3 make_chat_cases.py MODEL_DIR OUT_JSON [--seed 0] [--count 200]

Needs transformers (not on the build machine: run it where it is installed
and keep the output as test data). Writes a list of
    {"shape", "messages", "add_generation_prompt", "documents"?, "tools"?,
     "rendered", "ids"}            (ids: the rendering tokenized without
                                    special tokens added: the template
                                    writes the BOS)
or, for a chat the template rejects, {"shape", ..., "error": message}.
The chats cover every shape Command R7B's template has: plain turns, a
system message (first or later), assistant turns, the "chatbot" role,
documents, tools, assistant tool calls with a plan, one or several tool
results, generation prompt or not, roles that do not alternate; contents
with whitespace to strip, quotes, braces, Jinja-looking text, unicode.
"""
import argparse
import json
import random

from transformers import AutoTokenizer

WORDS = ["cruft", "kludge", "hacker", "foo", "bar", "Ünïcödé", "日本語", "emoji 🙂",
         "{{ not jinja }}", "{% raw %}", 'quote "x"', "back\\slash", "tab\there",
         "new\nline", "  padded  ", "<|START_OF_TURN_TOKEN|>", "42", "3.14", "-1e-05"]
VALUES = [1, 0, -7, 2.5, 1e-05, 1e20, True, False, None, "s", "ünï", [1, "a"], {"k": [None]}]


def sentence(rng):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6)))


def document(rng):
    doc = {rng.choice(["title", "url", "snippet", "text", "author"]): sentence(rng)
           for _ in range(rng.randint(1, 3))}
    if rng.random() < 0.3:
        doc["score"] = rng.choice(VALUES)
    return doc


def tool(rng, name):
    props = {f"p{i}": {"type": rng.choice(["string", "integer", "number", "boolean"]),
                       "description": sentence(rng)} for i in range(rng.randint(0, 3))}
    return {"type": "function",
            "function": {"name": name, "description": sentence(rng),
                         "parameters": {"type": "object", "properties": props,
                                        "required": sorted(props)[:1]}}}


def tool_turn(rng, messages, names, counter):
    calls = []
    for _ in range(rng.randint(1, 3)):
        counter[0] += 1
        calls.append({"id": f"call_{counter[0]}", "type": "function",
                      "function": {"name": rng.choice(names),
                                   "arguments": {"q": sentence(rng), "n": rng.choice(VALUES)}}})
    messages.append({"role": "assistant", "tool_plan": sentence(rng), "tool_calls": calls})
    for call in calls:
        messages.append({"role": "tool", "tool_call_id": call["id"], "content": sentence(rng)})


def chat(rng, shape):
    messages, counter = [], [0]
    if shape["system"]:
        messages.append({"role": "system", "content": sentence(rng)})
    names = [f"tool_{i}" for i in range(rng.randint(1, 3))]
    for turn in range(shape["turns"]):
        messages.append({"role": "user", "content": sentence(rng)})
        last = turn == shape["turns"] - 1
        if shape["tools"] and rng.random() < 0.6:
            tool_turn(rng, messages, names, counter)
        if not last or shape["end_with_assistant"]:
            role = "chatbot" if shape["tools"] and rng.random() < 0.2 else "assistant"
            messages.append({"role": role, "content": sentence(rng)})
        if shape["late_system"] and turn == 0:
            messages.append({"role": "system", "content": sentence(rng)})
    if shape["break_alternation"]:
        messages.insert(rng.randrange(len(messages) + 1), {"role": "user", "content": "again"})
    case = {"messages": messages, "add_generation_prompt": shape["generation_prompt"]}
    if shape["documents"]:
        case["documents"] = [document(rng) for _ in range(rng.randint(1, 4))]
    if shape["tools"]:
        case["tools"] = [tool(rng, n) for n in names]
    return case


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model_dir")
    ap.add_argument("out_json")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=200)
    args = ap.parse_args()
    tok = AutoTokenizer.from_pretrained(args.model_dir)
    rng = random.Random(args.seed)
    cases = []
    for i in range(args.count):
        tools = rng.random() < 0.4
        # The template takes its tool-use branch only when documents are given.
        shape = {"system": rng.random() < 0.5, "turns": rng.randint(1, 4),
                 "end_with_assistant": rng.random() < 0.2,
                 "generation_prompt": rng.random() < 0.8,
                 "documents": rng.random() < (0.8 if tools else 0.3), "tools": tools,
                 "late_system": rng.random() < 0.1, "break_alternation": rng.random() < 0.08}
        case = chat(rng, shape)
        case["shape"] = ",".join(k if v is True else f"{k}={v}" for k, v in shape.items()
                                 if v not in (False, 0))
        kwargs = {k: case[k] for k in ("documents", "tools") if k in case}
        try:
            rendered = tok.apply_chat_template(
                case["messages"], add_generation_prompt=case["add_generation_prompt"],
                tokenize=False, **kwargs)
            case["rendered"] = rendered
            case["ids"] = tok(rendered, add_special_tokens=False)["input_ids"]
        except Exception as e:  # the template's raise_exception
            case["error"] = str(e)
        cases.append(case)
    with open(args.out_json, "w", encoding="utf-8") as f:
        json.dump(cases, f, ensure_ascii=False, indent=1)
        f.write("\n")
    errors = sum("error" in c for c in cases)
    print(f"{len(cases)} chats ({errors} rejected by the template) -> {args.out_json}")


if __name__ == "__main__":
    main()
