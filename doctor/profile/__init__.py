"""Reading a serving profile (torch_npu profiler, msprof) the way a performance engineer would.

Pure analysis only: the files are found and streamed by ``doctor.shell.profile.files``; the
modules here turn events and table rows into steps, shares, a verdict and advice, with no I/O.
"""
