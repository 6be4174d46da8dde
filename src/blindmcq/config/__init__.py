"""Typed configuration: the schemas (:mod:`blindmcq.config.schema`) and where config files are read."""

from blindmcq.config.schema import Config, validate, validate_group

__all__ = ["Config", "validate", "validate_group"]
