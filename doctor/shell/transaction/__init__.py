"""The transaction engine of ``fix --apply`` and ``rollback`` (docs/fix.md): the one place that
changes an environment. Entry object: ``engine.Transaction``; a plan carried out through it:
``run_plan.apply_plan``; undoing: ``rollback.rollback_last`` and ``recovery``. Everything it
reads back from its state directory is untrusted input (statedir.py, schema.py, roots.py)."""
