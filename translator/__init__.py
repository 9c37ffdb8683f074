"""The source translator: finds checkpoint/recompute sites (and, with --scope model, the core API set) and rewrites
them into the other framework.

A text job: nothing here imports torch or MindSpore. The per-file core is ``translate.translate_bytes`` (pure);
``engine`` walks trees, writes files and reports. The package itself imports nothing, so each module can be
imported alone.
"""
