#!/usr/bin/env python3
"""Checks cohere2c-tokenize against Hugging Face's answers.

    check_tokenize.py TOOL MODEL CASES.json [CASES.json ...]

Each CASES file is one of
  - a list of {"text", "ids", "ids_no_special", "decoded"} (tokenizer cases:
    ids with special tokens added; decoded: ids_no_special decoded, special
    tokens kept);
  - a list of {"messages", "add_generation_prompt", "documents"?, "tools"?,
    "rendered", "ids"} or, for a chat the template rejects, {..., "error"}
    (chat cases);
  - {"encode": [... as tokenizer cases, plus "decoded_skip_special"],
     "decode": [{"ids", "decoded", "decoded_skip_special"}]}
    (make_tokenizer_cases.py).
Every case goes through `TOOL MODEL` as JSON lines in one run; each answer
must equal the expected one exactly (an error: error_agrees). Prints the mismatches and exits 1 on
any, else prints how many cases agreed.
"""
import json
import subprocess
import sys


def requests_of(cases):
    """(request, expected answer) pairs for one cases file."""
    if isinstance(cases, dict):
        for c in cases["encode"]:
            # decoded there is decode(ids, skip_special_tokens=False): the
            # post-processor's BOS, then the text's ids read back.
            readback = c["decoded"][len(BOS):] if c["decoded"].startswith(BOS) else None
            yield ({"text": c["text"]}, {"ids": c["ids"], "decoded": readback})
            yield ({"text": c["text"], "add_special_tokens": False},
                   {"ids": c["ids_no_special"], "decoded": readback})
            yield ({"ids": c["ids"]}, {"text": c["decoded"]})
            yield ({"ids": c["ids"], "skip_special_tokens": True},
                   {"text": c["decoded_skip_special"]})
        for c in cases["decode"]:
            yield ({"ids": c["ids"]}, {"text": c["decoded"]})
            yield ({"ids": c["ids"], "skip_special_tokens": True},
                   {"text": c["decoded_skip_special"]})
        return
    for c in cases:
        if "messages" in c:
            request = {k: c[k] for k in ("messages", "add_generation_prompt", "documents", "tools")
                       if k in c}
            if "error" in c:
                yield (request, {"error": c["error"]})
            else:
                yield (request, {"rendered": c["rendered"], "ids": c["ids"]})
        else:
            yield ({"text": c["text"]}, {"ids": c["ids"], "decoded": c["decoded"]})
            yield ({"text": c["text"], "add_special_tokens": False},
                   {"ids": c["ids_no_special"], "decoded": c["decoded"]})


RAISED = "the chat template raised: "
BOS = "<BOS_TOKEN>"


def error_agrees(expected, found):
    """A chat the template rejects must be rejected: with the template's own
    message where it raised one (raise_exception), with any message where
    jinja2 failed otherwise (e.g. a method called on an undefined value)."""
    if found is None:
        return False
    if " must " in expected or expected.startswith("Conversation"):
        return found.endswith(RAISED + expected)
    return True


def main():
    tool, model, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    pairs = []
    for path in files:
        with open(path, encoding="utf-8") as f:
            pairs += [(path, r, e) for r, e in requests_of(json.load(f))]
    lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for _, r, _ in pairs)
    run = subprocess.run([tool, model], input=lines.encode(), capture_output=True)
    answers = run.stdout.decode("utf-8").split("\n")[:-1]
    if len(answers) != len(pairs):
        print(f"{len(pairs)} requests, {len(answers)} answers; exit {run.returncode}; "
              f"stderr: {run.stderr.decode()[:2000]}")
        return 1
    bad = 0
    for (path, request, expected), line in zip(pairs, answers):
        answer = json.loads(line)
        wrong = {k: (v, answer.get(k)) for k, v in expected.items()
                 if v is not None and k != "error" and answer.get(k) != v}
        if "error" in expected and not error_agrees(expected["error"], answer.get("error")):
            wrong["error"] = (expected["error"], answer.get("error"))
        if wrong:
            bad += 1
            if bad <= 10:
                print(f"MISMATCH {path}: {json.dumps(request, ensure_ascii=False)[:300]}")
                for k, (want, got) in wrong.items():
                    print(f"  {k}: expected {json.dumps(want, ensure_ascii=False)[:500]}")
                    print(f"  {k}: found    {json.dumps(got, ensure_ascii=False)[:500]}")
    # The tool exits 1 exactly when some line failed.
    status = 1 if any("error" in e for _, _, e in pairs) else 0
    if bad or run.returncode != status:
        print(f"{bad} of {len(pairs)} cases differ; exit status {run.returncode}")
        return 1
    print(f"{len(pairs)} cases agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
