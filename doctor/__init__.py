"""ascend-doctor: environment doctor and version reconciler for LLM serving on Ascend NPUs."""

__version__ = "0.1.0"
