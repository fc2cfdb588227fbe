"""cudadoctor: can PyTorch use your NVIDIA GPU? If not, why, and the exact fix.

Data flows one way: probes -> facts -> checks -> findings -> renderers.
"""

__version__ = "0.1.0"

#: Version of the facts and report documents. Bump on an incompatible change.
SCHEMA_VERSION = 1
