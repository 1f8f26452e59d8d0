# Check (and optionally repair) an image built on a vllm-ascend base, so that a broken image
# fails its build instead of failing in production. No NPU is needed: during `docker build`
# the doctor judges the build stage (CANN, Python stack, env) and skips the hardware.
#
#   docker build -t my-serving .                                                   # check only
#   docker build --build-arg BASE=quay.io/ascend/vllm-ascend:v0.11.0rc3-a3 -t my-serving .
#   docker build --build-arg DOCTOR_FIX=1 -t my-serving .                           # fix, then check
#   docker build --build-arg DOCTOR_FAIL_ON=warn -t my-serving .                    # warnings fail too
#
# Put your own layers (model code, pip installs) between FROM and the doctor step, so that the
# check sees the final environment.
ARG BASE=quay.io/ascend/vllm-ascend:v0.11.0rc3
FROM ${BASE}

ARG DOCTOR_FIX=0
ARG DOCTOR_FAIL_ON=fail

# The doctor lives in a virtualenv of its own: installing it never changes the packages of the
# serving environment it judges.
COPY pyproject.toml README.md /opt/ascend-doctor/src/
COPY doctor /opt/ascend-doctor/src/doctor
COPY matrices /opt/ascend-doctor/src/matrices
COPY docker/build-step.sh /opt/ascend-doctor/build-step.sh
RUN python3 -m venv /opt/ascend-doctor/venv \
 && /opt/ascend-doctor/venv/bin/pip install --no-cache-dir /opt/ascend-doctor/src \
 && ln -sf /opt/ascend-doctor/venv/bin/ascend-doctor /usr/local/bin/ascend-doctor

RUN DOCTOR_FIX="${DOCTOR_FIX}" DOCTOR_FAIL_ON="${DOCTOR_FAIL_ON}" sh /opt/ascend-doctor/build-step.sh
