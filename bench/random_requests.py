"""Requests files of random prompt ids, for the benchmarks that run cohere2c-run --requests."""
import json
import random

FIRST_ID = 10  # ids below are left out: a tokenizer's special tokens come first


def random_prompt(rng, vocab, length):
    """`length` ids drawn uniformly from [FIRST_ID, vocab)."""
    return [rng.randrange(FIRST_ID, vocab) for _ in range(length)]


def write_requests(path, count, prompt_length, new_tokens, vocab, seed=0, temperature=0.0):
    """`count` requests r0, r1, ... of random prompts, each asking for `new_tokens`, one JSON
    object a line (cohere2c-run's --requests format); greedy, or sampled at `temperature`
    with request i's seed i."""
    rng = random.Random(seed)
    with open(path, "w") as f:
        for i in range(count):
            request = {"id": f"r{i}", "prompt_ids": random_prompt(rng, vocab, prompt_length),
                       "max_new_tokens": new_tokens}
            if temperature > 0:
                request.update(temperature=temperature, seed=i)
            f.write(json.dumps(request) + "\n")
