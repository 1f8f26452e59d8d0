"""Mooncake: which build is installed (the Ascend one is mooncake-transfer-engine-npu)."""
from __future__ import annotations

from typing import Iterable

from ..findings import FAIL, INFO, OK, Finding, msg
from . import Context, rule

NPU_DIST = "mooncake-transfer-engine-npu"


@rule("mooncake")
def mooncake_installed(ctx: Context) -> Iterable[Finding]:
    pk, r = ctx.facts.packages, ctx.release
    if pk is None:
        return []
    builds = sorted(d for d in pk.dists if d.startswith("mooncake-transfer-engine"))
    if not builds:
        if r is not None and r.mooncake:
            return [Finding("mooncake.installed", INFO,
                            msg("Mooncake is not installed (only needed for KV-cache pooling and PD disaggregation)",
                                "未安装 Mooncake（仅 KV Cache 池化和 PD 分离需要）"),
                            observed="not installed", expected=r.mooncake, source=r.source_of("mooncake"))]
        return []
    wrong = [b for b in builds if b != NPU_DIST]
    if wrong and NPU_DIST not in builds:
        d = pk.dists[wrong[0]]
        return [Finding("mooncake.installed", FAIL,
                        msg(f"{d.display_name or d.name} {d.version} has no Ascend transport ('Unsupported transport ascend')",
                            f"{d.display_name or d.name} {d.version} 不含昇腾传输层（'Unsupported transport ascend'）"),
                        observed=f"{d.name} {d.version}", expected=NPU_DIST,
                        hint=msg(f"pip uninstall -y {d.name} && ascend-doctor fix --apply   (installs {NPU_DIST} or rebuilds with -DUSE_ASCEND_DIRECT=ON)",
                                 f"pip uninstall -y {d.name} && ascend-doctor fix --apply   （安装 {NPU_DIST} 或用 -DUSE_ASCEND_DIRECT=ON 重新编译）"),
                        fixable="auto")]
    d = pk.dists[NPU_DIST]
    return [Finding("mooncake.installed", OK, msg(f"{NPU_DIST} {d.version}", f"{NPU_DIST} {d.version}"),
                    observed=d.version, expected=r.mooncake if r else None)]
