"""The I/O of pip steps that doctor/shell/apply.py and the bundles share: downloading the files a
resolved plan names (hash-checked) and the hashed requirements of a bundle. The pure half of
every step kind is doctor/plan/steps.py."""
