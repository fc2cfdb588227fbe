"""The GitHub issue bot: read an issue, answer as a maintainer would, precision first.

* :mod:`.event`: the ``issues`` / ``issue_comment`` event payload GitHub sends → the issue to read,
  or why not to answer;
* :mod:`.config`: the calling repository's ``.github/cudadoctor.yml`` and the action's inputs;
* :mod:`.answer`: title and body → one answer (a named cause, "asks for more", or "looks healthy"),
  decided from the same report `check --from-text` makes;
* :mod:`cudadoctor.render.github_comment`: the answer as the comment's Markdown (only reads it);
* :mod:`.post`: the one comment on GitHub (found by a hidden marker and edited in place), labels, or
  the job summary in dry-run; stdlib only (urllib).

``python -m cudadoctor.bot --event FILE`` is what the composite action (action.yml) runs.
"""
