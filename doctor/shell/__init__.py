"""The shell: everything that touches the host (files, processes, network, the cache).

Importing it hands the pure core the I/O it is given rather than does: the catalogue's parsed
words are kept in ``doctor.shell.host.cache`` (doctor.i18n never writes a file of its own).
"""
from doctor import i18n as _i18n
from doctor.shell.host import cache as _cache

_i18n.use_store(_cache)
