"""Engines: each turns (data / model / spec) into leaf intervals per step and an ``AuditResult``."""
