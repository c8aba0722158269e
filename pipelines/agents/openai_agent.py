"""A case-based memory agent written as its authors would write one: the `openai` client package
(PyPI), its own prompt (past cases split into ones that worked and ones that did not, in the
style of Memento's case-based planner), its own parsing (a `Final answer:` line, a ```sql
block) and its own label-free self-check. Nothing in it is lucid's but protocol 1 on standard
input and output: `OpenAI()` reads OPENAI_BASE_URL and OPENAI_API_KEY, which lucid points at its
loopback endpoint, so every call below is cached, recorded and replayable by lucid.

Run it with `grade: agent` to keep its self-check as the episode's grade (pipelines/agent-openai.yaml).
"""

import json
import re
import sys

from openai import OpenAI

SYSTEM = (
    "You solve tasks by reusing past cases. Cases that worked are examples to follow; cases "
    "that did not work are mistakes to avoid. Reason in at most two short sentences, then end "
    "with one line: Final answer: <answer>."
)


def cases(memories, artifact):
    """The retrieved cases as the prompt shows them, good ones first."""
    worked = [m for m in memories if m["q"]]
    failed = [m for m in memories if not m["q"]]
    out = []
    for title, group in (("Cases that worked", worked), ("Cases that did not work", failed)):
        if group:
            out.append(title + ":")
            out.extend(f"- Question: {m['question']}\n  Final answer: {m[artifact]}" for m in group)
    return "\n".join(out)


def final_answer(text, artifact):
    """The answer the reply ends with: a ```sql block for SQL, else the last `Final answer:`."""
    if artifact == "sql":
        blocks = re.findall(r"```(?:sql)?\s*(.*?)```", text, re.S | re.I)
        if blocks:
            return blocks[-1].strip()
    found = re.findall(r"final answer\s*:\s*(.+)", text, re.I)
    if found:
        return found[-1].strip()
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def main():
    request = json.loads(sys.stdin.readline())
    task, artifact = request["task"], request["artifact"]
    client = OpenAI()  # OPENAI_BASE_URL and OPENAI_API_KEY from the environment
    model = "agent"  # lucid's endpoint answers with the stage's model whatever the name
    facts = "".join(f"{k}: {v}\n" for k, v in task.items() if k != "question")
    shown = cases(request["memories"], artifact)
    prompt = f"{shown}\n\n{facts}Question: {task['question']}" if shown else f"{facts}Question: {task['question']}"
    if artifact == "sql":
        prompt += "\nGive the SQLite query in a ```sql block."
    reply = client.chat.completions.create(
        model=model,
        messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}],
        temperature=0,
        max_tokens=256 if artifact == "sql" else 48,
    )
    text = reply.choices[0].message.content or ""
    answer = final_answer(text, artifact)
    # Label-free self-check: the model judges its own answer, with no reference.
    check = client.chat.completions.create(
        model=model,
        messages=[{"role": "user", "content": f"Question: {task['question']}\nProposed answer: {answer}\n"
                   "Is the proposed answer correct? Reply YES or NO."}],
        temperature=0,
        max_tokens=3,
    )
    verdict = (check.choices[0].message.content or "").strip().upper()
    json.dump({
        "protocol": 1,
        "artifact": answer,
        "plan": re.split(r"final answer\s*:", text, flags=re.I)[0].strip(),
        "grade": "correct" if verdict.startswith("YES") else "incorrect",
        "trace": {"reply": text, "self_check": verdict},
    }, sys.stdout)


if __name__ == "__main__":
    main()
