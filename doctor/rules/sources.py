"""Where the rules' knowledge comes from: public files pinned to a commit, or pages of this
repository (docs/sources/ retells what users need). Every Rule.source is built from these."""
from __future__ import annotations

VLLM_ASCEND = "https://github.com/vllm-project/vllm-ascend/blob/182b75ea84ff13ece27b57391331ef8935410aea"
VLLM_ASCEND_ISSUES = "https://github.com/vllm-project/vllm-ascend/issues"
VERSIONING = f"{VLLM_ASCEND}/docs/source/community/versioning_policy.md"
INSTALLATION = f"{VLLM_ASCEND}/docs/source/installation.md"
TORCH_NPU = "https://github.com/Ascend/pytorch/blob/9e73e708ab9350d203475609f36f8a43f6a0c2ab"
VLLM_ASCEND_FILES = "https://pypi.org/project/vllm-ascend/#files"  # the wheels' tags and Requires-Dist
TORCH_NPU_FILES = "https://pypi.org/project/torch-npu/#files"
HOST_FORMATS = "docs/sources/ascend-host-formats.md"
MOONCAKE = "docs/sources/mooncake.md"
