import argparse


class FlexibleArgumentParser(argparse.ArgumentParser):
    """vllm's parser also accepts --flag_name for --flag-name."""

    def parse_known_args(self, args=None, namespace=None):
        args = [a.replace("_", "-") if a.startswith("--") and "=" not in a else a for a in (args or [])]
        return super().parse_known_args(args, namespace)
