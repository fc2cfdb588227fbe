"""Built-in checks. Each module exposes ``register()`` and is listed as an entry point in the
``cudadoctor.checks`` group in pyproject.toml, exactly as a third-party plugin would be."""
