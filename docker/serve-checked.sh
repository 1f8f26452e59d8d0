#!/bin/sh
# Container entrypoint: judge the runtime stage on the NPU host (driver mounts, /dev/davinci*,
# npu-smi, driver/CANN pairing), then start the serving command given as arguments. A failing
# check (exit 3) stops the container before vLLM starts; warnings pass unless DOCTOR_FAIL_ON=warn.
#   DOCTOR_PYTHON  serving interpreter (default: python3 on PATH)
#   DOCTOR_ROOT    root to read (default: /; the tests point it at a fake host)
#   DOCTOR_FAIL_ON fail (default) or warn
set -u
PY="${DOCTOR_PYTHON:-$(command -v python3)}"
ascend-doctor check --stage runtime --root "${DOCTOR_ROOT:-/}" --python "$PY" --fail-on "${DOCTOR_FAIL_ON:-fail}"
rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -ne 4 ]; then
    exit "$rc"
fi
exec "$@"
