"""A complete lucid agent in Python's standard library: protocol 1 (see README, "Bring your own
agent"). lucid runs it once per episode: one JSON request on standard input, one JSON reply on
standard output. Its model calls go to lucid's loopback endpoint (OPENAI_BASE_URL), which
forwards them to the stage's model, caches and records them."""

import json
import os
import sys
import urllib.request


def chat(prompt, max_tokens, stop=None):
    """One chat completion through lucid's endpoint."""
    body = json.dumps({
        "model": "any",  # the stage's model answers whatever the name
        "messages": [
            {"role": "system", "content": "You are a careful assistant. Answer briefly."},
            {"role": "user", "content": prompt},
        ],
        "max_tokens": max_tokens,
        "temperature": 0,
        "stop": stop,
    }).encode()
    req = urllib.request.Request(
        os.environ["OPENAI_BASE_URL"] + "/chat/completions",
        data=body,
        headers={"Content-Type": "application/json",
                 "Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]},
    )
    with urllib.request.urlopen(req, timeout=600) as resp:
        return json.load(resp)["choices"][0]["message"]["content"]


def main():
    request = json.loads(sys.stdin.readline())
    task, artifact = request["task"], request["artifact"]
    # The memories lucid retrieved for this episode, with the labels this arm shows.
    lines = []
    for m in request["memories"]:
        verdict = "worked" if m["q"] else "did not work"
        lines.append(f"- Q: {m['question']}\n  A: {m[artifact]} ({verdict})")
    context = "".join(f"{k}: {v}\n" for k, v in task.items() if k != "question")
    past = "Past cases:\n" + "\n".join(lines) + "\n" if lines else ""
    plan = chat(f"{past}{context}Question: {task['question']}\nPlan the answer in one or two steps.", 48)
    if artifact == "sql":
        ask, limit, stop = "Write one SQLite query that answers the question, in a ```sql block.", 256, None
    else:
        ask, limit, stop = f"Write the {artifact} only.", 24, ["\n"]
    answer = chat(f"{past}{context}Plan: {plan}\nQuestion: {task['question']}\n{ask}", limit, stop)
    json.dump({"protocol": 1, "artifact": answer, "plan": plan}, sys.stdout)


if __name__ == "__main__":
    main()
