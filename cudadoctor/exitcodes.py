"""Exit codes: the only part of the command-line output that is an API besides JSON."""

OK = 0  #: no error findings (with --strict: no warnings either)
FINDINGS = 1  #: at least one error finding (with --strict: or a warning)
BAD_INPUT = 2  #: usage error or bad input (missing, truncated, non-JSON, wrong-schema file)
INTERNAL = 3  #: a bug in cudadoctor itself; reported in one line, never a traceback
