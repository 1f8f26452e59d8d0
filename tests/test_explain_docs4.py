"""Issue 25, phase 1 of batch 4: classes read from the components' FAQs and troubleshooting pages
(not from any mined row). Each line is the wording the cited document gives; each near miss is a
healthy line next to it."""
from __future__ import annotations

import pytest

from tests.explain_kit import catalog

DOCUMENTED = [
    # vllm-ascend faqs.md, "ImportError: Please install vllm[audio]": the missing librosa itself
    ("ModuleNotFoundError: No module named 'librosa'", "vllm.audio_extra"),
    # MindIE / CANN FAQ "cannot allocate memory in static TLS block": torch's bundled libgomp
    # carries a hash in its file name (torch.libs/libgomp-6e1a1d1b.so.1.0.0)
    ("ImportError: /usr/local/lib/python3.10/site-packages/torch/lib/../../torch.libs/libgomp-6e1a1d1b.so.1.0.0: "
     "cannot allocate memory in static TLS block", "env.libgomp_static_tls"),
]

HEALTHY = [
    ("Requirement already satisfied: librosa in /usr/local/lib/python3.10/site-packages (0.10.2)", "vllm.audio_extra"),
    ("export LD_PRELOAD=/usr/lib/python3/site-packages/torch.libs/libgomp-6e1a1d1b.so.1.0.0", "env.libgomp_static_tls"),
]


def _ids(text):
    return {a.id for a in catalog().explain_text(text)}


@pytest.mark.parametrize("line,sid", DOCUMENTED)
def test_documented_line_is_explained(line, sid):
    assert sid in _ids(line), line


@pytest.mark.parametrize("line,sid", HEALTHY)
def test_healthy_line_is_not(line, sid):
    assert sid not in _ids(line), line
