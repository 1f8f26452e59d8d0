"""Curated compatibility data (TOML), shipped inside the wheel as ``doctor.matrices``."""
