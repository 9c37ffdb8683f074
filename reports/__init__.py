"""Part of recompat; filled in by later issues."""
