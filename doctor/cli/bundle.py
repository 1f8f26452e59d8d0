"""What ``fix --bundle DIR`` (without --apply) prints; the workflow is doctor.usecases.fix.make_bundle."""
from __future__ import annotations

import json
import sys

from doctor.findings import cmd


def print_bundle(made, as_json: bool, lang: str) -> None:
    """The bundle written (and the command that uses it on the node), or the plan with the
    resolver's message when it could not be proven (``made.manifest`` is None)."""
    from doctor.i18n import tr

    plan = made.plan
    if made.manifest is None:
        if as_json:
            sys.stdout.write(json.dumps(plan.to_json(lang), ensure_ascii=False, indent=2) + "\n")
        else:
            from doctor.cli.plan_render import print_plan

            print_plan(plan, lang)
        return
    if as_json:
        sys.stdout.write(json.dumps({"bundle": made.directory, "manifest": made.manifest, "plan": plan.to_json(lang)},
                                    ensure_ascii=False, indent=2) + "\n")
        return
    from doctor.cli.plan_render import human_size

    from doctor.terminal import say

    tp = made.platform
    say(tr("bundle.written", lang, path=made.directory, files=len(made.manifest["files"]), size=human_size(made.size),
           target=plan.target, platform=tp.platforms[0], python=tp.python_version))
    say(tr("bundle.then", lang))
    say(cmd("ascend-doctor", "fix", "--apply", "--bundle", made.directory).shell())
