"""The events the target scripts report (doctor/smoke_target): one JSON object per line, in
their events file (or on stdout after MARK)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

MARK = "@@ascend-doctor-smoke@@ "


def parse_line(line: str) -> Optional[Dict[str, Any]]:
    """The event on a line of the events file (or a MARK line of the output), or None for
    anything else (library logs, a line cut short by a kill)."""
    at = line.find(MARK)
    text = line[at + len(MARK):] if at >= 0 else line
    if not text.lstrip().startswith("{"):
        return None
    try:
        event = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return event if isinstance(event, dict) and isinstance(event.get("event"), str) else None


@dataclass
class ScriptRun:
    """What one run of a target script reported: its steps in order, the step it was in when it
    stopped (if it stopped), and the outputs it produced, by run name (device, reference, vllm)."""

    steps: List[Dict[str, Any]] = field(default_factory=list)
    running: Optional[str] = None
    outputs: Dict[str, List[Dict[str, Any]]] = field(default_factory=dict)
    other: List[Dict[str, Any]] = field(default_factory=list)

    def add(self, event: Dict[str, Any]) -> None:
        kind = event["event"]
        if kind == "begin":
            self.running = str(event.get("step"))
        elif kind == "step":
            self.steps.append(event)
            self.running = None
        elif kind == "outputs":
            self.outputs[str(event.get("run"))] = list(event.get("outputs") or [])
        else:
            self.other.append(event)

    @property
    def failed(self) -> Optional[Dict[str, Any]]:
        return next((s for s in self.steps if not s.get("ok")), None)

    def step(self, name: str) -> Optional[Dict[str, Any]]:
        return next((s for s in self.steps if s.get("step") == name), None)

    def metrics(self) -> Dict[str, Any]:
        """Every finished step's metrics, and its seconds as <step>_s."""
        out: Dict[str, Any] = {}
        for s in self.steps:
            if s.get("ok"):
                out[f"{s['step']}_s"] = s.get("seconds")
                for k, v in (s.get("metrics") or {}).items():
                    out.setdefault(k, v)
        return out


def read_run(lines: List[str]) -> ScriptRun:
    run = ScriptRun()
    for line in lines:
        event = parse_line(line)
        if event:
            run.add(event)
    return run
