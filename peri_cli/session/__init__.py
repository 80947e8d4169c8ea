"""The record: the append-only transcript, the session store and its locks, checkpoints of the
files Peri wrote, rewind, costs read back from the record.

It imports only `peri_cli.base`."""
