#!/bin/sh
# Dockerfile build step: judge the image's stack, and repair it first when DOCTOR_FIX=1.
# A failing check fails `docker build`; warnings pass unless DOCTOR_FAIL_ON=warn.
#   DOCTOR_PYTHON  serving interpreter (default: python3 on PATH)
#   DOCTOR_ROOT    root to read (default: /; the tests point it at a fake image)
#   DOCTOR_FIX     1: run `ascend-doctor fix --apply` before the check
#   DOCTOR_FAIL_ON fail (default) or warn
set -u
PY="${DOCTOR_PYTHON:-$(command -v python3)}"
ROOT="${DOCTOR_ROOT:-/}"
if [ "${DOCTOR_FIX:-0}" = "1" ]; then
    # Its exit code is the re-check's; the check below decides, with its own output.
    ascend-doctor fix --apply --yes --no-smoke --stage build --root "$ROOT" --python "$PY"
fi
ascend-doctor check --stage build --root "$ROOT" --python "$PY" --fail-on "${DOCTOR_FAIL_ON:-fail}" -v
rc=$?
if [ "$rc" -eq 4 ]; then
    exit 0  # warnings only
fi
exit "$rc"
