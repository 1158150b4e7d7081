"""A small agent host in Python over reasons.wasm, with the `wasmtime` package:

    python python_host.py reasons.wasm

Below the layer, a Python tool registry; above it, a permission callback that shows each
call's arguments and, beside them, the model's reason. It plays one scripted turn and
prints what happened as JSON, for the tests to check.
"""

import json
import sys

from wasmtime import Engine, Store
from wasmtime.component import Component, Linker, Record, Variant


def read(args: str) -> str:
    return "contents of " + json.loads(args)["path"]


def boom(args: str) -> str:
    raise RuntimeError("boom exploded")


def schema(properties: dict) -> dict:
    return {"type": "object", "properties": properties}


# The tools the registry runs, each a declaration in MCP's shape and a function.
REGISTRY = {
    "read": ({"name": "read", "inputSchema": schema({"path": {"type": "string"}})}, read),
    # Owns a `reason` parameter: the layer must leave it alone (R5).
    "own": ({"name": "own", "inputSchema": schema({"reason": {"type": "string"}})}, lambda args: args),
    "boom": ({"name": "boom", "inputSchema": {"type": "object"}}, boom),
}
received = []


def result(call_id: str, content: str, is_error: bool) -> Record:
    record = Record()
    # WIT field names keep their dashes.
    setattr(record, "call-id", call_id)
    setattr(record, "content", json.dumps(content))
    setattr(record, "is-error", is_error)
    return record


# The provider the component imports. A WIT `result` error is returned as a Variant; an
# exception would trap the component, so every failure of the registry becomes `failed`.
def tools_for_llm(store):
    return [json.dumps(declaration, separators=(",", ":")) for declaration, _ in REGISTRY.values()]


def execute_tool_calls(store, calls):
    try:
        results = []
        for call in calls:
            received.append([call.id, call.name, call.arguments.payload])
            if call.name not in REGISTRY:
                results.append(result(call.id, f"no tool {call.name}", True))
                continue
            run = REGISTRY[call.name][1]
            results.append(result(call.id, run(call.arguments.payload), False))
        return results
    except Exception as error:  # noqa: BLE001 - every failure is the provider's error
        return Variant("failed", str(error))


def main(path: str) -> None:
    engine = Engine()
    store = Store(engine)
    linker = Linker(engine)
    with linker.root() as root:
        # No WASI: the component imports its provider and the types, nothing else.
        with root.add_instance("agent:tools/types@0.1.0"):
            pass
        with root.add_instance("agent:tools/provider@0.1.0") as provider:
            provider.add_func("tools-for-llm", tools_for_llm)
            provider.add_func("execute-tool-calls", execute_tool_calls)
    instance = linker.instantiate(store, Component.from_file(engine, path))

    def export(interface: str, name: str):
        func = instance.get_func(store, instance.get_export_index(
            store, name, instance.get_export_index(store, interface)))

        def call(*args):
            value = func(store, *args)
            func.post_return(store)
            return value
        return call

    layer = "agent:tools/provider@0.1.0"
    surface = "agent:tools/reasons@0.1.0"
    tools = export(layer, "tools-for-llm")()
    param = export(surface, "reason-param")()
    augmented_tools = export(surface, "augmented-tools")()
    execute = export(layer, "execute-tool-calls")

    prompts = []

    def permission(call: Record) -> bool:
        # The reason is the model's claim about itself: shown beside the arguments, as text.
        args = json.loads(call.arguments.payload or "{}")
        reason = args.pop(param, None) if call.name in augmented_tools else None
        shown = json.dumps(args, separators=(",", ":"))
        prompts.append(f"{call.name} {shown} | reason: {reason or '(none given)'}")
        return True

    def text(call_id: str, name: str, arguments: str) -> Record:
        call = Record()
        call.id, call.name, call.arguments = call_id, name, Variant("text", arguments)
        return call

    turns = [
        [
            text("1", "read", '{"path":"a.txt","reason":"to see a"}'),
            text("2", "read", '{ "path" : "b.txt" }'),
            text("3", "own", '{"reason":"mine"}'),
            text("4", "ghost", '{"reason":"x"}'),
        ],
        [text("5", "boom", '{"reason":"to try"}'), text("6", "read", '{"path":"c.txt"}')],
    ]
    results = []
    for calls in turns:
        approved = [call for call in calls if permission(call)]
        for r in execute(approved):
            results.append([getattr(r, "call-id"), r.content, getattr(r, "is-error")])
    print(json.dumps({"param": param, "augmented_tools": augmented_tools, "tools": tools,
                      "received": received, "results": results, "prompts": prompts}))


if __name__ == "__main__":
    main(sys.argv[1])
