"""Mooncake on Ascend: the knowledge and pure judgement behind the ``mooncake`` layer.

Small modules with one job each: ``jsontext`` (strict JSON with precise errors), ``sizes``,
``config`` (MOONCAKE_CONFIG_PATH), ``envvars``, ``serveargs`` (the ``vllm serve`` command line),
``elf`` and ``loader`` (what the dynamic loader will find), ``master`` (mooncake_master's HTTP
endpoints), ``connectors`` (registered connector names, read from source), ``build`` (the
source rebuild). Nothing here imports mooncake, torch or vllm.
"""
