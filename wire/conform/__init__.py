"""`kgc conform`'s wire side: probes as timed scripts, the driver that runs them against any broker and
the reference, structural comparison of the answers, and the response-level properties."""
