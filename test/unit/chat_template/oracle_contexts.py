"""Random render contexts for jinja_oracle.py: chats, tools, documents and
the values synthetic templates compute with, from one seeded RNG."""

WORDS = [
    "foo", "bar", "日本語", "emoji 🙂", "  padded  ", "new\nline", "tab\there",
    'quote "x"', "it's", "back\\slash", "{{ not jinja }}", "{% raw %}",
    "<|im_start|>", "Ünïcödé", "-1e-05", "3.14", "42", "", "ß", "İstanbul",
    "\u00a0nbsp", "x\u2028y", "Hello World", "hello-world (x)", "ǅemal",
    "\n\n", " ", "a.b.c", "</think>", "UPPER", "MiXeD cAsE", "ﬁne",
]
FLOATS = [0.0, -0.0, 1.0, 0.5, 2.5, -3.75, 1e-05, 1e16, 1.5e300, 0.1 + 0.2,
          123456.789, -1e-7, 3.14159, 100.0, 7.0]
SPECIAL = {
    "bos_token": "<BOS>", "eos_token": "<EOS>", "pad_token": "<PAD>",
    "unk_token": "<UNK>",
}


class Contexts:
    def __init__(self, rng):
        self.rng = rng

    # -- values -----------------------------------------------------------
    def text(self, parts=3):
        r = self.rng
        return " ".join(r.choice(WORDS) for _ in range(r.randint(0, parts)))

    def integer(self):
        r = self.rng
        return r.choice([0, 1, 2, 3, -1, -7, 10, 42, 255, 1000,
                         r.randint(-10**6, 10**6)])

    def scalar(self):
        r = self.rng
        kind = r.randrange(6)
        if kind == 0:
            return None
        if kind == 1:
            return r.random() < 0.5
        if kind == 2:
            return self.integer()
        if kind == 3:
            return r.choice(FLOATS)
        return self.text()

    def value(self, depth=0):
        r = self.rng
        kind = r.randrange(8 if depth < 2 else 5)
        if kind < 5:
            return self.scalar()
        if kind < 7:
            return [self.value(depth + 1) for _ in range(r.randint(0, 4))]
        return {r.choice(["a", "b", "name", "role", "content", "items", "x"]):
                self.value(depth + 1) for _ in range(r.randint(0, 3))}

    def record(self):
        r = self.rng
        rec = {"name": r.choice(["ann", "Bob", "carl", "Dee", "émile"]),
               "age": r.randint(0, 90),
               "role": r.choice(["user", "assistant", "system", "tool"])}
        if r.random() < 0.6:
            rec["tag"] = r.choice(["x", "y", "z"])
        if r.random() < 0.3:
            rec["score"] = r.choice(FLOATS)
        return rec

    # -- tools and documents ----------------------------------------------
    def json_schema(self, depth=0):
        r = self.rng
        kind = r.randrange(7 if depth < 2 else 4)
        schema = {"type": ["string", "number", "integer", "boolean",
                           "array", "object", "union"][kind]}
        if schema["type"] == "array":
            schema["items"] = self.json_schema(depth + 1)
        elif schema["type"] == "object" and r.random() < 0.5:
            schema["additionalProperties"] = self.json_schema(depth + 1)
        elif schema["type"] == "union":
            schema["type"] = ["string", "integer", "null"][: r.randint(1, 3)]
        if r.random() < 0.7:
            schema["description"] = self.text(2)
        return schema

    def tool(self, i):
        r = self.rng
        props = {f"p{k}": self.json_schema() for k in range(r.randint(0, 3))}
        function = {
            "name": f"tool_{i}",
            "description": self.text(3),
            "parameters": {"type": "object", "properties": props,
                           "required": sorted(props)[:1]},
        }
        if r.random() < 0.2:
            function["return"] = self.json_schema()
        return {"type": "function", "function": function}

    def tools(self):
        return [self.tool(i) for i in range(self.rng.randint(1, 3))]

    def documents(self):
        r = self.rng
        docs = []
        for _ in range(r.randint(1, 4)):
            keys = r.sample(["title", "snippet", "url", "author", "score"],
                            r.randint(1, 3))
            docs.append({k: (self.integer() if k == "score" else self.text())
                         for k in keys})
        return docs

    # -- chats --------------------------------------------------------------
    def tool_call(self, i, id_length=6):
        r = self.rng
        call_id = ("call" + str(i) * 9)[:id_length]
        return {"id": call_id, "type": "function",
                "function": {"name": f"tool_{r.randint(0, 2)}",
                             "arguments": {"q": self.text(), "n": self.integer()}}}

    def turns(self, n, tool_calls=False, id_length=6):
        """user/assistant turns, some assistant turns calling tools and
        followed by tool results."""
        r = self.rng
        messages = []
        calls = 0
        for _ in range(n):
            messages.append({"role": "user", "content": self.text()})
            if tool_calls and r.random() < 0.4:
                batch = [self.tool_call(calls + k, id_length)
                         for k in range(r.randint(1, 2))]
                calls += len(batch)
                messages.append({"role": "assistant", "tool_plan": self.text(),
                                 "tool_calls": batch})
                for call in batch:
                    messages.append({"role": "tool", "tool_call_id": call["id"],
                                     "content": self.text()})
            messages.append({"role": "assistant", "content": self.text()})
        return messages

    def perturb(self, messages):
        """Sometimes breaks the chat: a dropped turn, a missing content."""
        r = self.rng
        roll = r.random()
        if roll < 0.1 and len(messages) > 1:
            del messages[r.randrange(len(messages))]
        elif roll < 0.15 and messages:
            messages[r.randrange(len(messages))].pop("content", None)
        elif roll < 0.2:
            messages.append({"role": "user", "content": "again"})
        return messages

    def chat(self, tool_calls, id_length=6, system=None):
        r = self.rng
        messages = self.turns(r.randint(0, 3), tool_calls, id_length)
        if messages and r.random() < 0.5:
            messages.pop()
        if system if system is not None else r.random() < 0.4:
            messages.insert(0, {"role": "system", "content": self.text()})
        if not messages:
            messages = [{"role": "user", "content": self.text()}]
        return self.perturb(messages)

    def base(self, messages):
        context = dict(SPECIAL)
        context["messages"] = messages
        context["add_generation_prompt"] = self.rng.random() < 0.5
        context["tools"] = None
        context["documents"] = None
        return context

    def cohere_chat(self):
        r = self.rng
        context = self.base(self.chat(tool_calls=r.random() < 0.5))
        context["bos_token"] = "<BOS_TOKEN>"
        context["eos_token"] = "<|END_OF_TURN_TOKEN|>"
        if r.random() < 0.4:
            context["tools"] = self.tools()
        if r.random() < 0.4:
            context["documents"] = self.documents()
        if r.random() < 0.2:
            context["enable_citations"] = r.random() < 0.5
        return context

    def model_chat(self, template):
        r = self.rng
        id_length = 9 if "mistral" in template and r.random() < 0.8 else 6
        context = self.base(self.chat(tool_calls=r.random() < 0.5,
                                      id_length=id_length))
        if r.random() < 0.4:
            context["tools"] = self.tools()
        if "llama3" in template and r.random() < 0.3:
            context["builtin_tools"] = ["brave_search", "code_interpreter"]
        if "llama3" in template and r.random() < 0.3:
            context["tools_in_user_message"] = False
        if "gemma" in template and r.random() < 0.3:
            for m in context["messages"]:
                if "content" in m and r.random() < 0.5:
                    m["content"] = [{"type": "image"},
                                    {"type": "text", "text": m["content"]}]
        if "mistral" in template and r.random() < 0.3:
            context.pop("tools")
        return context

    def synthetic(self):
        r = self.rng
        context = self.base(self.chat(tool_calls=r.random() < 0.3))
        context.update({
            "x": self.value(), "y": self.value(), "s": self.text(),
            "t": r.choice(WORDS), "n": self.integer(), "m": r.randint(-3, 5),
            "f": r.choice(FLOATS), "b": r.random() < 0.5,
            "xs": [self.scalar() for _ in range(r.randint(0, 5))],
            "ns": [self.integer() for _ in range(r.randint(0, 6))],
            "ws": [r.choice(WORDS) for _ in range(r.randint(0, 5))],
            "ds": [self.record() for _ in range(r.randint(0, 5))],
            "d": {k: self.scalar() for k in r.sample(
                ["a", "b", "c", "items", "keys", "name"], r.randint(0, 4))},
            "tools": self.tools() if r.random() < 0.5 else None,
            "documents": self.documents() if r.random() < 0.3 else None,
        })
        if r.random() < 0.2:
            for key in ["x", "s", "n"]:
                context.pop(key)
        return context
