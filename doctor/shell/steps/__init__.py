"""The I/O half of each step kind (doctor.plan.steps has the pure half): how a step's files are
downloaded and how it is carried out."""
